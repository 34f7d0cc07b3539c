import type { Store } from '../db/index.js';
import { createDigestFiguresRepository } from '../db/repositories/digest-figures.js';
import type { DigestFigures } from './figures.js';
import { summarizeDigest, type SummarizeOptions } from './summarize.js';
import type { DigestWindow } from './window.js';

/**
 * The digest of `[from, to)` from the store: runs alive in the window, per-task bests against the
 * baseline and the strongest peer, evaluations and harness time, model cost, questions by source and
 * the questions that preceded the largest gains. Reads only; safe to call from any replica.
 */
export async function computeDigest(store: Pick<Store, 'db'>, window: DigestWindow, options: SummarizeOptions = {}): Promise<DigestFigures> {
  if (!(window.from < window.to)) throw new RangeError(`digest window must end after it starts (${window.from.toISOString()} .. ${window.to.toISOString()})`);
  const repo = createDigestFiguresRepository(store.db);
  const [runs, evaluations, stepUsage, questionsAsked] = await Promise.all([
    repo.runsAlive(window.from, window.to),
    repo.evaluationsFinished(window.from, window.to),
    repo.stepUsage(window.from, window.to),
    repo.questionsAsked(window.from, window.to),
  ]);
  const tasks = [...new Set(evaluations.map((e) => e.task))];
  // Only runs that produced a correct candidate in the window can have realized a gain in it.
  const gainRuns = [...new Set(evaluations.filter((e) => e.runId && e.status === 'ok' && e.correct === true).map((e) => e.runId!))];
  const [previousBests, gainQuestions] = await Promise.all([repo.previousBests(window.from, tasks), repo.questionsWithGain(gainRuns)]);
  // Counted bests are decided over each run's whole history (src/harness/counted-best.ts).
  const runEvaluations = await repo.runEvaluations([...new Set([...runs.map((r) => r.id), ...gainRuns, ...gainQuestions.map((q) => q.runId)])]);
  return summarizeDigest({ runs, evaluations, previousBests, stepUsage, questionsAsked, gainQuestions, runEvaluations }, window, options);
}
