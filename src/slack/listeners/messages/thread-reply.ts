import type { App } from '@slack/bolt';
import { AppError } from '../../../core/errors.js';
import { canReopen, isTerminal } from '../../../db/index.js';
import { detailsOf, headlineOf } from '../../agent-port.js';
import { canAsk, canControl } from '../../auth.js';
import { escapeMrkdwn } from '../../poster/limits.js';
import type { SlackDeps } from '../../deps.js';
import { createRunExtrasCache } from '../../reporter/run-extras.js';
import { section, who } from '../../views/format.js';
import { renderStatusCard } from '../../views/status-card.js';
import { describeClosedCard } from '../answers/closed-card.js';
import { submitCardAnswer } from '../answers/submit-answer.js';
import { bindReply } from './bind-reply.js';
import { parseThreadReply } from './parse-reply.js';

/** Reactions that tell the person their reply was taken, without adding messages to the thread. */
export const ACK_REACTIONS = { queued: 'inbox_tray', done: 'white_check_mark' } as const;

/** Message subtypes that are a person writing in the thread; everything else (edits, deletions, joins, bots) is ignored. */
const PERSON_SUBTYPES = new Set([undefined, 'thread_broadcast', 'file_share']);

interface ReplyEvent {
  subtype?: string;
  bot_id?: string;
  user?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  channel: string;
}

/**
 * A reply in a run's thread. A thread belongs to exactly one run (looked up by channel + thread ts);
 * a reply written while a decision card was open answers that card (or, when the card closed before
 * the reply got here, is answered "that question is closed" in the thread); any other reply becomes
 * the agent's next question (idempotency key = channel:ts, so a redelivery asks
 * nothing twice), or steers the run when it is a control word. Bot messages, edits and asides are
 * ignored.
 */
export function registerThreadReplies(app: App, deps: SlackDeps): void {
  app.message(async ({ message, context }) => {
    const m = message as unknown as ReplyEvent;
    if (!PERSON_SUBTYPES.has(m.subtype) || m.bot_id || !m.user) return;
    if (!m.thread_ts || m.thread_ts === m.ts) return;
    const run = await deps.store.runs.findByThread(m.channel, m.thread_ts);
    if (!run) return;

    const whisper = (text: string) => void deps.poster.postEphemeral({ channel: m.channel, user: m.user!, threadTs: m.thread_ts!, text });
    const react = (name: string) => void deps.poster.addReaction({ channel: m.channel, ts: m.ts, name });
    const reply = parseThreadReply(m.text ?? '', context.botUserId);
    try {
      switch (reply.kind) {
        case 'ignore':
          return;
        case 'invalid':
          return whisper(`:warning: ${reply.error}`);
        case 'question': {
          const allowed = canAsk(deps.slack, m.user);
          if (!allowed.ok) return whisper(`:no_entry: ${allowed.reason}`);
          // A reply answers the card that was open when it was written (bind-reply.ts).
          const binding = bindReply(m.ts, await deps.store.decisionCards.forRun(run.id));
          // Said in the thread, to its author: the answer reached nobody, and the others see why too.
          const sayInThread = (why: string) => {
            const text = `:lock: ${who(m.user!)} ${why.charAt(0).toLowerCase()}${why.slice(1)}`;
            void deps.poster.postMessage({ channel: m.channel, threadTs: m.thread_ts!, text, blocks: [section(text)] });
          };
          if (binding.kind === 'closed') return sayInThread(await describeClosedCard(deps, run.id, binding.cardId));
          if (binding.kind === 'open') {
            const outcome = await submitCardAnswer(deps, { cardId: binding.cardId, channel: m.channel, user: m.user, text: reply.text, idempotencyKey: `${m.channel}:${m.ts}` });
            if (outcome.kind === 'closed') return sayInThread(outcome.message);
            if (outcome.kind === 'refused') return whisper(outcome.message);
            if (outcome.created) react(ACK_REACTIONS.queued);
            return;
          }
          if (isTerminal(run.status) && !canReopen(run)) {
            return whisper(`:information_source: ${run.id} has ended (${run.status}), so your reply was not passed on. Start a new run with \`/kernelseek start ${run.task}\`.`);
          }
          const submitted = await deps.control.submitQuestion(run.id, { text: reply.text, author: m.user, idempotencyKey: `${m.channel}:${m.ts}` });
          if (submitted.created) react(ACK_REACTIONS.queued);
          return;
        }
        case 'show': {
          // What the model read of an evaluation, for anyone who may ask: its whole result as a file.
          const allowed = canAsk(deps.slack, m.user);
          if (!allowed.ok) return whisper(`:no_entry: ${allowed.reason}`);
          const evaluation = (await deps.store.evaluations.forRun(run.id)).find((e) => e.seq === reply.seq && e.status !== 'pending');
          if (!evaluation) return whisper(`:warning: ${run.id} has no finished evaluation #${reply.seq}.`);
          const text = `Evaluation #${reply.seq} of ${run.id}, as the agent read it: ${headlineOf(evaluation)}. The whole result is in the file.`;
          void deps.poster.postMessage({ channel: m.channel, threadTs: m.thread_ts, text, blocks: [section(escapeMrkdwn(text))], files: [{ filename: `eval-${reply.seq}.txt`, content: detailsOf(evaluation), title: `Evaluation #${reply.seq}: the whole result` }] });
          return;
        }
        case 'control':
        case 'budget': {
          // Reading the card is for anyone who may ask; changing the run is for its owner or an admin.
          const readOnly = reply.kind === 'control' && reply.action === 'status';
          const allowed = readOnly ? canAsk(deps.slack, m.user) : canControl(deps.slack, m.user, run);
          if (!allowed.ok) return whisper(`:no_entry: ${allowed.reason}`);
          if (reply.kind === 'budget') {
            const view = await deps.control.addBudget(run.id, { evals: reply.evals });
            // The engine reports state changes but not a bigger budget: redraw the card here.
            const card = renderStatusCard(view, await createRunExtrasCache(deps.store).get(run.id));
            void deps.poster.updateMessage({ channel: m.channel, ts: m.thread_ts, text: card.text, blocks: card.blocks });
          } else if (reply.action === 'status') {
            const view = await deps.control.getStatus(run.id);
            const card = renderStatusCard(view, await createRunExtrasCache(deps.store).get(run.id));
            void deps.poster.postEphemeral({ channel: m.channel, user: m.user, threadTs: m.thread_ts, text: card.text, blocks: card.blocks });
            return;
          } else if (reply.action === 'stop') {
            await deps.control.stopRun(run.id, { by: m.user });
          } else if (reply.action === 'pause') {
            await deps.control.pauseRun(run.id);
          } else {
            await deps.control.resumeRun(run.id);
          }
          react(ACK_REACTIONS.done);
          return;
        }
      }
    } catch (error) {
      if (error instanceof AppError) return whisper(`:warning: ${error.userMessage}`);
      // Not taken (the database is down, a bug): rethrown, so the reply is not counted as handled.
      // The event-id middleware forgets it and Slack delivers it again, or its author is told to
      // send it again; it is never acknowledged and dropped.
      deps.logger.error({ err: error, runId: run.id, ts: m.ts }, 'handling a thread reply failed');
      throw error;
    }
  });
}
