import type { DecisionReport, RunView } from '../agent-port.js';
import { capText, escapeMrkdwn, INLINE_TEXT_CHARS } from '../poster/limits.js';
import { ACTION_IDS } from './action-ids.js';
import type { Button, KnownBlock } from './block-kit.js';
import { cardBlockId, cardLabel } from './card-ids.js';
import { DECISION_CHOICES } from './decision-choices.js';
import { context, fields, section, slackTime, type SlackView } from './format.js';
import { EVIDENCE_LABELS, evidenceValue } from './thread-messages.js';

/** How a reply in the thread is bound to a card (docs/slack.md, "Answers bound to their card"). */
export const BINDING_HINT = 'A reply in this thread answers the card that is open when you write it.';

/**
 * A decision card: what happened, the measured evidence, and the ways to answer it — a button per
 * offered choice, *Reply…* (a form bound to this card), *Ask from the bank*, *Stop*. The card's id is
 * in the actions block and in every button's value, so each answer names the card it answers.
 */
export function renderDecisionCard(run: RunView, decision: DecisionReport): SlackView {
  const reason = capText(decision.reason, INLINE_TEXT_CHARS);
  const label = cardLabel(decision.id);
  const evidence = Object.entries(decision.evidence)
    // The claim is already quoted in the reason.
    .filter(([k, v]) => v !== null && v !== undefined && k !== 'claim')
    .map(([k, v]) => [EVIDENCE_LABELS[k] ?? escapeMrkdwn(k.replace(/_/g, ' ')), evidenceValue(k, v)] as [string, string]);
  const wait = decision.deadline
    ? `Answer with a button, *Reply…*, or a reply in this thread. If nobody has by ${slackTime(decision.deadline)}, the bank asks one. ${BINDING_HINT}`
    : 'Autonomous run: the bank asks a question now.';
  const blocks: KnownBlock[] = [section(`:thinking_face: *Decision point: ${decision.trigger.replace(/_/g, ' ')}* (${label}) — ${escapeMrkdwn(reason.text)}`)];
  if (evidence.length > 0) blocks.push(fields(evidence));
  // The figures above come from these evaluations: their whole results travel with the card as a file.
  const cited = decision.cited ?? [];
  if (cited.length > 0) blocks.push(context(`From ${cited.map((c) => escapeMrkdwn(c.headline)).join('; ')}. Their per-scenario tables, intervals and verdicts are in the attached file.`));
  blocks.push(context(`${wait}\nCard \`${decision.id}\``));
  if (decision.deadline) {
    const choices: Button[] = (DECISION_CHOICES[decision.trigger] ?? []).map((c) => ({
      type: 'button',
      action_id: `${ACTION_IDS.answerChoice}:${c.id}`,
      text: { type: 'plain_text', text: c.label },
      value: `${decision.id}:${c.id}`,
    }));
    blocks.push({
      type: 'actions',
      block_id: cardBlockId(decision.id),
      elements: [
        ...choices,
        { type: 'button', action_id: ACTION_IDS.answerReply, text: { type: 'plain_text', text: 'Reply…' }, value: decision.id },
        { type: 'button', action_id: ACTION_IDS.askBank, style: 'primary', text: { type: 'plain_text', text: 'Ask from the bank' }, value: run.id },
        {
          type: 'button',
          action_id: ACTION_IDS.stopRun,
          style: 'danger',
          text: { type: 'plain_text', text: 'Stop' },
          value: run.id,
          confirm: {
            title: { type: 'plain_text', text: `Stop ${run.id}?` },
            text: { type: 'mrkdwn', text: 'The run ends now; its best kernel so far is posted in this thread.' },
            confirm: { type: 'plain_text', text: 'Stop the run' },
            deny: { type: 'plain_text', text: 'Keep it running' },
          },
        },
      ],
    });
  }
  const files = [
    ...(reason.overflow ? [{ filename: 'decision.txt', content: reason.overflow, title: 'Full text' }] : []),
    ...(cited.length > 0 ? [{ filename: `${decision.id}-evaluations.txt`, content: cited.map((c) => c.details).join('\n\n'), title: `The evaluations behind ${label}` }] : []),
  ];
  return {
    text: `Decision point ${label} (${decision.trigger}) in ${run.id}: ${escapeMrkdwn(reason.text)}`,
    blocks,
    ...(files.length > 0 ? { files } : {}),
  };
}
