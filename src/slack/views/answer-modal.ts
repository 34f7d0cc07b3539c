import type { types } from '@slack/bolt';
import { MAX_QUESTION_CHARS } from '../agent-port.js';
import { ANSWER_MODAL_ID } from './action-ids.js';
import { cardLabel } from './card-ids.js';

export const ANSWER_FIELD = 'ks_answer';

/** What the form carries back on submit: the card it answers and where its run's thread is. */
export interface AnswerMetadata {
  cardId: string;
  channel: string;
  threadTs: string;
}

/** *Reply…* on a decision card: a form whose answer goes to that card only. */
export function renderAnswerModal(card: { id: string; trigger: string }, meta: AnswerMetadata): types.ModalView {
  const label = cardLabel(card.id);
  return {
    type: 'modal',
    callback_id: ANSWER_MODAL_ID,
    private_metadata: JSON.stringify(meta),
    title: { type: 'plain_text', text: `Answer decision ${label}`.slice(0, 24) },
    submit: { type: 'plain_text', text: 'Ask the agent' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      {
        type: 'section',
        text: { type: 'mrkdwn', text: `Your question answers decision *${label}* (${card.trigger.replace(/_/g, ' ')}) and reaches the agent with it. If the card closes before you send it, nothing is passed on and you are told which one is open.` },
      },
      {
        type: 'input',
        block_id: ANSWER_FIELD,
        label: { type: 'plain_text', text: 'Your question for the agent' },
        element: { type: 'plain_text_input', action_id: ANSWER_FIELD, multiline: true, max_length: MAX_QUESTION_CHARS },
      },
    ],
  };
}
