import path from 'node:path';
import { readFile } from 'node:fs/promises';
import type { Store } from '../../db/index.js';
import type { Logger } from '../../core/logger.js';
import { describeEnd, type RunReporter, type RunSummary, type RunView } from '../agent-port.js';
import type { PostResult, SlackPoster } from '../poster/poster.js';
import type { KnownBlock } from '../views/block-kit.js';
import { renderSpeedupChart, RUN_SERIES_STYLES, runSpeedupPoints } from '../../digest/index.js';
import { renderRunSummary } from '../views/run-summary.js';
import { renderStatusCard } from '../views/status-card.js';
import { renderDecisionCard, renderNewBest, renderQuestionAsked, renderRunError } from '../views/thread-messages.js';
import { context, who, type SlackView } from '../views/format.js';
import { createRunExtrasCache } from './run-extras.js';
import type { ResultsPort } from '../results-port.js';

export interface SlackReporterDeps {
  poster: SlackPoster;
  store: Store;
  logger: Logger;
  /** What the final card offers (*Export*, *Open pull request*); without it, no buttons. */
  results?: Pick<ResultsPort, 'offer'> | undefined;
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

  function post(run: RunView, view: SlackView): Promise<PostResult> {
    if (!run.slack) return Promise.resolve({ ok: false, error: 'no_thread' });
    return poster.postMessage({ channel: run.slack.channel, threadTs: run.slack.threadTs, text: view.text, blocks: view.blocks, ...(view.files ? { files: view.files } : {}) });
  }

  // Decision cards whose buttons are still live, per run: once the decision is answered (or the run
  // ends) the buttons give way to a line saying so, so nobody presses a button that no longer applies.
  const openDecisions = new Map<string, Promise<{ channel: string; ts: string; blocks: KnownBlock[] } | undefined>>();

  function closeDecision(runId: string, note: string): void {
    const open = openDecisions.get(runId);
    if (!open) return;
    openDecisions.delete(runId);
    void open.then((card) => {
      if (!card) return;
      const blocks: KnownBlock[] = [...card.blocks.filter((b) => b.type !== 'actions'), context(note)];
      void poster.updateMessage({ channel: card.channel, ts: card.ts, text: note, blocks });
    });
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
    // The digest's shared renderer: each counted candidate, and the best so far as a step line from 1.0.
    const points = runSpeedupPoints(evaluations);
    // Nothing counted: the summary already says so, and an empty chart would only add noise.
    if (points.length > 0) {
      const png = await renderSpeedupChart(points, { x: 'evaluation', title: `${run.id} · ${run.task}: speedup vs baseline`, styles: RUN_SERIES_STYLES });
      void poster.uploadFile({ channel: slack.channel, threadTs: slack.threadTs, filename: `${run.id}-speedup.png`, content: png, title: `Speedup over evaluations, ${run.id}` });
    }
  }

  return {
    statusChanged: guarded('statusChanged', async ({ run }) => redraw(run)),
    stepFinished: guarded('stepFinished', async ({ run }) => redraw(run)),
    toolStarted: async () => {},
    // The status card is edited at most every few seconds and a thread is no place for a ticker.
    evaluationProgress: async () => {},
    evaluationFinished: guarded('evaluationFinished', async ({ run, evaluation }) => {
      extras.noteEvaluation(run.id, evaluation);
      await redraw(run);
    }),
    newBest: guarded('newBest', async ({ run, evaluation, previousSpeedup }) => {
      extras.noteEvaluation(run.id, evaluation);
      extras.noteBestPeer(run.id, evaluation.bestPeer);
      void post(run, renderNewBest(run, evaluation, previousSpeedup, evaluation.bestPeer));
      await redraw(run);
    }),
    decisionPoint: guarded('decisionPoint', async ({ run, decision }) => {
      const card = renderDecisionCard(run, decision);
      const posted = post(run, card);
      if (card.blocks.some((b) => b.type === 'actions')) {
        const channel = run.slack!.channel;
        openDecisions.set(run.id, posted.then((r) => (r.ok && r.ts ? { channel, ts: r.ts, blocks: card.blocks } : undefined)));
      }
      await redraw(run);
    }),
    questionAsked: guarded('questionAsked', async ({ run, question }) => {
      closeDecision(run.id, question.source === 'bank' ? ':books: The bank asked a question.' : `:speech_balloon: ${who(question.author)} asked a question.`);
      void post(run, renderQuestionAsked(run, question));
      await redraw(run);
    }),
    error: guarded('error', async ({ run, message, fatal }) => {
      void post(run, renderRunError(run, message, fatal));
      await redraw(run);
    }),
    runFinished: guarded('runFinished', async ({ run, summary }) => {
      closeDecision(run.id, `The run has ended: ${describeEnd(summary.endReason)}.${summary.endReason === 'converged' ? ' Reply in this thread (or say `resume`) to continue it.' : ''}`);
      await redraw(run);
      const { bestPeer } = await extras.get(run.id);
      const offer = (await deps.results?.offer(run.id).catch(() => null)) ?? null;
      void post(run, renderRunSummary(run, summary, bestPeer ?? null, offer));
      await attachResults(run, summary);
      extras.forget(run.id);
    }),
  };
}
