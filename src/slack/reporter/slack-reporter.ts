import path from 'node:path';
import { readFile } from 'node:fs/promises';
import type { Store } from '../../db/index.js';
import type { Logger } from '../../core/logger.js';
import { describeEnd, type RunReporter, type RunSummary, type RunView } from '../agent-port.js';
import type { PostResult, SlackPoster } from '../poster/poster.js';
import type { KnownBlock } from '../views/block-kit.js';
import { renderRunChart, runChartData, type GoalOf } from '../../digest/index.js';
import { renderRunSummary } from '../views/run-summary.js';
import { renderStatusCard } from '../views/status-card.js';
import { renderNewBest, renderQuestionAsked, renderRunError } from '../views/thread-messages.js';
import { renderDecisionCard } from '../views/decision-card.js';
import { context, who, type SlackView } from '../views/format.js';
import { createLiveStatus, stageOfProgress, stageOfTool, statusForProgress, statusForTool, THINKING, THINKING_MESSAGES, type StatusClock } from './live-status.js';
import { createRunExtrasCache } from './run-extras.js';
import type { ResultsPort } from '../results-port.js';

export interface SlackReporterDeps {
  poster: SlackPoster;
  store: Store;
  logger: Logger;
  /** What the final card offers (*Export*, *Open pull request*); without it, no buttons. */
  results?: Pick<ResultsPort, 'offer'> | undefined;
  /** How often an unchanged thread status is sent again (default 90 s, inside Slack's 2-minute clear). */
  statusRefreshMs?: number;
  /** The status refresh's timers (tests drive a long evaluation with a clock of their own). */
  statusClock?: StatusClock;
  /** Each task's goal, for the goal line of the final chart (none without it). */
  goals?: () => Promise<GoalOf>;
}

/**
 * A run's Slack thread: the root message is the status card, edited in place on every change (the
 * poster coalesces edits, so a burst of steps costs one or two calls); separate messages only for new
 * bests, decision cards, questions, errors and the final summary with the best kernel and a chart.
 *
 * Methods enqueue and return: the engine never waits for Slack's pacing, and a Slack failure is
 * logged by the poster, never thrown into the run. Runs started outside Slack are ignored.
 */
export function createSlackReporter(deps: SlackReporterDeps): RunReporter {
  const { poster, store, logger } = deps;
  const extras = createRunExtrasCache(store);

  async function redraw(run: RunView): Promise<void> {
    if (!run.slack) return;
    const card = renderStatusCard(run, await extras.get(run.id));
    void poster.updateMessage({ channel: run.slack.channel, ts: run.slack.threadTs, text: card.text, blocks: card.blocks });
  }

  const live = createLiveStatus({ poster, ...(deps.statusRefreshMs ? { refreshMs: deps.statusRefreshMs } : {}), ...(deps.statusClock ? { clock: deps.statusClock } : {}) });
  const threadOf = (run: RunView) => run.slack!;

  /** Posts in the thread; Slack clears the thread's status line on a message, so it is shown again after. */
  function post(run: RunView, view: SlackView, options: { filesFollow?: boolean } = {}): Promise<PostResult> {
    if (!run.slack) return Promise.resolve({ ok: false, error: 'no_thread' });
    const thread = run.slack;
    const posted = poster.postMessage({ channel: thread.channel, threadTs: thread.threadTs, text: view.text, blocks: view.blocks, ...(view.files ? { files: view.files } : {}), ...options });
    void posted.then((r) => r.ok && live.posted(thread));
    return posted;
  }

  /** The thread's status line for a run in state `run.status` (cleared while it waits for people or is over). */
  function showState(run: RunView): void {
    if (!run.slack) return;
    if (run.status === 'running' || run.status === 'queued') {
      if (run.waitingForWorker) live.set(threadOf(run), `is ${run.waitingForWorker}`);
      else live.set(threadOf(run), THINKING, THINKING_MESSAGES);
    } else {
      live.clear(threadOf(run));
    }
  }

  // Decision cards whose buttons are still live, by card id (and per run, oldest first): once a card
  // is answered (or the run ends) its buttons give way to a line saying so, so nobody presses a
  // button that no longer applies.
  const openDecisions = new Map<string, Promise<{ channel: string; ts: string; blocks: KnownBlock[] } | undefined>>();
  const cardsOfRun = new Map<string, string[]>();

  function closeCard(runId: string, cardId: string, note: string): void {
    const open = openDecisions.get(cardId);
    cardsOfRun.set(runId, (cardsOfRun.get(runId) ?? []).filter((id) => id !== cardId));
    if (!open) return;
    openDecisions.delete(cardId);
    void open.then((card) => {
      if (!card) return;
      const blocks: KnownBlock[] = [...card.blocks.filter((b) => b.type !== 'actions'), context(note)];
      void poster.updateMessage({ channel: card.channel, ts: card.ts, text: note, blocks });
    });
  }

  /** Closes `cardId`, or (no id: an answer delivered at the open decision point) every open card of the run. */
  function closeDecision(runId: string, note: string, cardId?: string | null): void {
    const ids = cardId ? [cardId] : [...(cardsOfRun.get(runId) ?? [])];
    for (const id of ids) closeCard(runId, id, note);
  }

  /** Never lets a reporter failure (a database blip while reading extras) reach the run. */
  function guarded<E extends { run: RunView }>(name: string, fn: (event: E) => Promise<void>) {
    return async (event: E) => {
      if (!event.run.slack) return;
      try {
        await fn(event);
      } catch (error) {
        logger.warn({ err: error, runId: event.run.id, event: name }, 'Slack reporter failed; the run continues');
      }
    };
  }

  async function attachResults(run: RunView, summary: RunSummary): Promise<void> {
    const slack = run.slack!;
    const evaluations = await store.evaluations.forRun(run.id);
    if (summary.best) {
      const row = run.best ? evaluations.find((e) => e.id === run.best!.evaluationId) : evaluations.find((e) => e.seq === summary.best!.evaluationSeq);
      // The evaluation row travels with the database, so the file can be posted by any process.
      const source = row?.source ?? (await readFile(summary.best.file, 'utf8').catch(() => undefined));
      if (source !== undefined) {
        void poster.uploadFile({
          channel: slack.channel,
          threadTs: slack.threadTs,
          filename: path.basename(summary.best.file) || 'kernel.txt',
          content: source,
          title: `Best kernel of ${run.id} (eval #${summary.best.evaluationSeq})`,
        });
      } else {
        logger.warn({ runId: run.id, file: summary.best.file }, 'best kernel source not found; summary posted without it');
      }
    }
    // The run's chart (as `/kernelseek chart`): each counted candidate with its interval, the best so
    // far as a step line from 1.0, the baseline's, peers' and goal's lines.
    const goalOf = await deps.goals?.().catch(() => undefined);
    const input = { runId: run.id, task: run.task, target: run.target, goalVs: goalOf?.(run.task)?.vs, evaluations };
    // Nothing counted: the summary already says so, and an empty chart would only add noise.
    if (runChartData(input).points.length > 0) {
      const png = await renderRunChart(input);
      void poster.uploadFile({ channel: slack.channel, threadTs: slack.threadTs, filename: `${run.id}-speedup.png`, content: png, title: `Speedup over evaluations, ${run.id}` });
    }
  }

  return {
    statusChanged: guarded('statusChanged', async ({ run }) => {
      if (run.status !== 'running') extras.noteNow(run.id, null);
      showState(run);
      await redraw(run);
    }),
    stepStarted: guarded('stepStarted', async ({ run }) => {
      live.set(threadOf(run), THINKING, THINKING_MESSAGES);
      extras.noteNow(run.id, 'thinking');
    }),
    stepFinished: guarded('stepFinished', async ({ run }) => redraw(run)),
    toolStarted: guarded('toolStarted', async ({ run, name }) => {
      live.set(threadOf(run), statusForTool(name));
      // The card moves per stage too (the poster coalesces edits): compiling, correctness, timing.
      if (extras.noteNow(run.id, stageOfTool(name))) await redraw(run);
    }),
    // The thread's status line follows the harness's progress; the card changes once per stage (a
    // thread is no place for a per-scenario ticker, and chat.update is rate-limited).
    evaluationProgress: guarded('evaluationProgress', async ({ run, seq, progress }) => {
      const status = statusForProgress(progress);
      if (status) live.set(threadOf(run), status);
      const stage = stageOfProgress(seq, progress);
      if (stage && extras.noteNow(run.id, stage)) await redraw(run);
    }),
    evaluationFinished: guarded('evaluationFinished', async ({ run, evaluation }) => {
      extras.noteEvaluation(run.id, evaluation);
      extras.noteNow(run.id, 'thinking');
      live.set(threadOf(run), THINKING, THINKING_MESSAGES);
      await redraw(run);
    }),
    newBest: guarded('newBest', async ({ run, evaluation, previousSpeedup }) => {
      extras.noteEvaluation(run.id, evaluation);
      extras.noteBestPeer(run.id, evaluation.bestPeer);
      void post(run, renderNewBest(run, evaluation, previousSpeedup, evaluation.bestPeer));
      await redraw(run);
    }),
    decisionPoint: guarded('decisionPoint', async ({ run, decision }) => {
      // The run waits for people now: the card says so, the status line would only contradict it.
      live.clear(threadOf(run));
      extras.noteNow(run.id, null);
      const card = renderDecisionCard(run, decision);
      // The card's ts binds replies to it (stored when the post returns): its files (the cited
      // evaluations) are queued after it but not waited for.
      const posted = post(run, card, { filesFollow: true });
      const channel = run.slack!.channel;
      // The card's message is stored with its id, so a thread reply can be bound to the card open when it was written.
      void posted.then((r) => (r.ok && r.ts ? store.decisionCards.setMessage(decision.id, channel, r.ts) : undefined)).catch((error: unknown) => {
        logger.warn({ err: error, runId: run.id, card: decision.id }, 'could not record the decision card message');
      });
      if (card.blocks.some((b) => b.type === 'actions')) {
        openDecisions.set(decision.id, posted.then((r) => (r.ok && r.ts ? { channel, ts: r.ts, blocks: card.blocks } : undefined)));
        cardsOfRun.set(run.id, [...(cardsOfRun.get(run.id) ?? []), decision.id]);
      }
      await redraw(run);
    }),
    questionAsked: guarded('questionAsked', async ({ run, question }) => {
      if (question.trigger || question.decisionId) {
        closeDecision(run.id, question.source === 'bank' ? ':books: The bank asked a question.' : `:speech_balloon: ${who(question.author)} asked a question.`, question.decisionId);
      }
      void post(run, renderQuestionAsked(run, question));
      await redraw(run);
    }),
    error: guarded('error', async ({ run, message, fatal }) => {
      void post(run, renderRunError(run, message, fatal));
      await redraw(run);
    }),
    runFinished: guarded('runFinished', async ({ run, summary }) => {
      live.clear(threadOf(run));
      closeDecision(run.id, `The run has ended: ${describeEnd(summary.endReason)}.${summary.endReason === 'converged' || summary.endReason === 'no_evaluation' ? ' Reply in this thread (or say `resume`) to continue it.' : ''}`);
      await redraw(run);
      const { bestPeer } = await extras.get(run.id);
      const offer = (await deps.results?.offer(run.id).catch(() => null)) ?? null;
      void post(run, renderRunSummary(run, summary, bestPeer ?? null, offer));
      await attachResults(run, summary);
      extras.forget(run.id);
      cardsOfRun.delete(run.id);
    }),
  };
}
