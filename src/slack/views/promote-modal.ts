import type { types } from '@slack/bolt';
import { clip } from '../poster/limits.js';
import { quote } from './format.js';

export const PROMOTE_MODAL_ID = 'ks_promote_modal';
export const PROMOTE_FIELDS = { kind: 'ks_kind', triggers: 'ks_triggers' } as const;

export const BANK_KINDS = [
  { value: 'layer_shift', label: 'Layer shift', hint: 'moves the agent to a different layer of the system' },
  { value: 'limit_rejection', label: 'Limit rejection', hint: 'challenges a limit the agent claims to have reached' },
] as const;

export const BANK_TRIGGERS = [
  { value: 'plateau', label: 'Plateau (no new best for a while)' },
  { value: 'claimed_limit', label: 'Claimed limit (the agent says it cannot go further)' },
  { value: 'stopped', label: 'Stopped (the agent ended its turn)' },
  { value: 'failing', label: 'Failing (candidates keep failing)' },
  { value: 'target_reached', label: 'Target reached' },
] as const;

export interface PromoteMetadata {
  runId: string;
  questionId: number;
  channel: string;
  threadTs: string;
}

/** The form that adds a person's question to the bank: which kind of question, which decision points it fits. */
export function renderPromoteModal(question: { text: string; trigger: string | null }, meta: PromoteMetadata): types.ModalView {
  const option = (o: { value: string; label: string; hint?: string }) => ({
    text: { type: 'plain_text' as const, text: clip(o.label, 75) },
    value: o.value,
    ...(o.hint ? { description: { type: 'plain_text' as const, text: clip(o.hint, 75) } } : {}),
  });
  const initial = BANK_TRIGGERS.filter((t) => t.value === question.trigger).map(option);
  return {
    type: 'modal',
    callback_id: PROMOTE_MODAL_ID,
    private_metadata: JSON.stringify(meta),
    title: { type: 'plain_text', text: 'Add to the bank' },
    submit: { type: 'plain_text', text: 'Add' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: clip(`Question ${meta.questionId}:\n${quote(question.text)}`, 3000) } },
      {
        type: 'input',
        block_id: PROMOTE_FIELDS.kind,
        label: { type: 'plain_text', text: 'What does it do?' },
        element: { type: 'radio_buttons', action_id: PROMOTE_FIELDS.kind, options: BANK_KINDS.map(option) },
      },
      {
        type: 'input',
        block_id: PROMOTE_FIELDS.triggers,
        label: { type: 'plain_text', text: 'When should the bank ask it?' },
        element: { type: 'checkboxes', action_id: PROMOTE_FIELDS.triggers, options: BANK_TRIGGERS.map(option), ...(initial.length ? { initial_options: initial } : {}) },
      },
    ],
  };
}
