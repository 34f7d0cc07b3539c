import { DecisionClosedError } from '../../agent-port.js';
import { canAsk } from '../../auth.js';
import type { SlackDeps } from '../../deps.js';
import { parseCardId } from '../../views/card-ids.js';
import { describeClosedCard } from './closed-card.js';

export type AnswerOutcome =
  | { kind: 'taken'; created: boolean }
  /** Not passed on: `message` says why (safe to show, mrkdwn). */
  | { kind: 'refused'; message: string }
  /** The card has closed: `message` is the thread's answer, "that question is closed; the open one is …". */
  | { kind: 'closed'; message: string };

/**
 * A person's answer to one decision card (a choice button, the reply form, or a thread reply bound
 * to the card): checked (an allowed user; the card is a card of a run in this channel), then handed
 * to the engine with the card's id, which refuses it once the card has closed.
 */
export async function submitCardAnswer(
  deps: SlackDeps,
  input: { cardId: string; channel: string | undefined; user: string; text: string; idempotencyKey: string },
): Promise<AnswerOutcome> {
  const allowed = canAsk(deps.slack, input.user);
  if (!allowed.ok) return { kind: 'refused', message: `:no_entry: ${allowed.reason}` };
  const parsed = parseCardId(input.cardId);
  const run = parsed ? await deps.store.runs.get(parsed.runId) : undefined;
  // A card answers only from its run's own channel (a value carried elsewhere changes nothing).
  if (!parsed || !run || (input.channel && run.slackChannel !== input.channel)) {
    return { kind: 'refused', message: ':warning: That decision card is not one of a run in this channel.' };
  }
  try {
    const submitted = await deps.control.submitQuestion(run.id, { text: input.text, author: input.user, idempotencyKey: input.idempotencyKey, decisionId: input.cardId });
    return { kind: 'taken', created: submitted.created };
  } catch (error) {
    if (error instanceof DecisionClosedError) return { kind: 'closed', message: await describeClosedCard(deps, run.id, input.cardId) };
    throw error;
  }
}
