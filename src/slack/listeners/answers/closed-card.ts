import { canReopen, isTerminal, type DecisionCard } from '../../../db/index.js';
import type { SlackDeps } from '../../deps.js';
import { cardLabel } from '../../views/card-ids.js';
import { who } from '../../views/format.js';
import { mrkdwnLink } from '../../views/links.js';

/** Why a card closed, in words: who answered it, or what happened instead. */
async function closedBecause(deps: Pick<SlackDeps, 'store'>, card: DecisionCard | undefined): Promise<string> {
  const by = card?.closedBy ?? '';
  if (by.startsWith('question:')) {
    const question = await deps.store.questions.get(Number(by.slice('question:'.length)));
    if (question?.source === 'bank') return 'the bank answered it';
    if (question) return `${who(question.author)} answered it`;
    return 'it was answered';
  }
  if (by === 'run_ended') return 'the run ended';
  if (by === 'superseded') return 'the agent moved on';
  return 'the agent moved on';
}

/**
 * "That question is closed; the open one is …": what a person is told when their answer names a
 * card that has closed. Points at the open card (a link to its message) when there is one. The
 * caller addresses it (a mention in the thread, nothing in a private note or a form).
 */
export async function describeClosedCard(deps: Pick<SlackDeps, 'store' | 'directory'>, runId: string, cardId: string): Promise<string> {
  const cards = await deps.store.decisionCards.forRun(runId);
  const card = cards.find((c) => c.id === cardId);
  const open = cards.find((c) => c.closedAt === null);
  const head = `That question (${cardLabel(cardId)}) is closed — ${await closedBecause(deps, card)} — so your answer was not passed on to the agent.`;
  if (!open) {
    const run = await deps.store.runs.get(runId);
    if (run && canReopen(run)) return `${head} The run has converged: reply again to continue it with your question.`;
    return run && isTerminal(run.status) ? `${head} The run has ended.` : `${head} No question is open now: reply again to ask the agent at its next step.`;
  }
  const url = open.slackChannel && open.slackTs && deps.directory ? await deps.directory.permalink(open.slackChannel, open.slackTs) : undefined;
  return `${head} The open one is ${mrkdwnLink(url, cardLabel(open.id))} (${open.trigger.replace(/_/g, ' ')}): answer that one.`;
}
