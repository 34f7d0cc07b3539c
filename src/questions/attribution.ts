import type { Store } from '../db/index.js';
import { isTerminal, type RunStatus } from '../db/index.js';
import { createBankAttributionRepository, type AttributionUpdate, type EvaluationScore } from '../db/repositories/bank-attribution.js';
import { countedGain } from '../harness/counted-best.js';

/** Evaluations after a question over which its effect is measured, unless the caller says otherwise. */
export const DEFAULT_ATTRIBUTION_K = 5;

export interface Attribution {
  /**
   * The run's counted best at or before the question (the baseline counts as 1.0): full-set, correct
   * results only, a later one the best only when it beats the best before it by the harness's
   * interval (src/harness/counted-best.ts). A quick-subset figure or a noise "gain" is no gain.
   */
  bestBefore: number;
  /** The counted best after the question's next `evalsAfter` evaluations. */
  bestAfter: number;
  /** bestAfter / bestBefore once final; null while the window is still open. */
  gain: number | null;
  evalsAfter: number;
}

/**
 * Attributes one question from its run's evaluation history: the best speedup before it, and after
 * its next `k` finished evaluations (in seq order; the window stops at the first still pending). The
 * gain is final, and recorded, once those k evaluations exist, or when the run has ended after at
 * least one; a question followed by no evaluation at all is never credited or blamed.
 */
export function attributeQuestion(
  question: { evalSeqAtAsk: number },
  history: readonly Pick<EvaluationScore, 'seq' | 'status' | 'correct' | 'scenarios' | 'speedupVsBaseline' | 'result'>[],
  options: { k: number; runEnded: boolean },
): Attribution {
  const rows = history.filter((e) => e.seq != null).sort((a, b) => a.seq! - b.seq!);
  const beforePending = rows.some((e) => e.seq! <= question.evalSeqAtAsk && e.status === 'pending');
  let evalsAfter = 0;
  let untilSeq = question.evalSeqAtAsk;
  for (const e of rows) {
    if (e.seq! <= question.evalSeqAtAsk) continue;
    if (e.status === 'pending' || evalsAfter >= options.k) break;
    evalsAfter += 1;
    untilSeq = e.seq!;
  }
  // The counted best (src/harness/counted-best.ts): quick-subset results never move it.
  const { before, after } = countedGain(rows, question.evalSeqAtAsk, untilSeq);
  const final = !beforePending && (evalsAfter >= options.k || (options.runEnded && evalsAfter > 0));
  return { bestBefore: before, bestAfter: after, gain: final ? after / before : null, evalsAfter };
}

export interface AttributionReport {
  /** Questions looked at (delivered, attribution not final before this call). */
  examined: number;
  /** Rows whose stored figures changed. */
  updated: number;
  /** Questions whose gain became final in this call. */
  finalized: number;
}

/**
 * Brings the attribution of every asked question (a person's or the bank's) up to date and stores it
 * on its `questions` row. Incremental: questions whose gain is final for this `k` are not read again,
 * so it is cheap to call after every evaluation.
 */
export async function attributeGains(store: Store, options: { k?: number } = {}): Promise<AttributionReport> {
  const k = options.k ?? DEFAULT_ATTRIBUTION_K;
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a whole number of evaluations >= 1, got ${k}`);
  const repo = createBankAttributionRepository(store.db);
  const open = await repo.openQuestions(k);
  const runIds = [...new Set(open.map((q) => q.runId))];
  const [scores, statuses] = await Promise.all([repo.evaluationScores(runIds), repo.runStatuses(runIds)]);
  const byRun = new Map<string, EvaluationScore[]>();
  for (const s of scores) {
    const list = byRun.get(s.runId!) ?? [];
    list.push(s);
    byRun.set(s.runId!, list);
  }
  const report: AttributionReport = { examined: open.length, updated: 0, finalized: 0 };
  const changed: AttributionUpdate[] = [];
  for (const q of open) {
    const status = statuses.get(q.runId) as RunStatus | undefined;
    const a = attributeQuestion(q, byRun.get(q.runId) ?? [], { k, runEnded: status !== undefined && isTerminal(status) });
    if (a.bestBefore === q.bestBefore && a.bestAfter === q.bestAfter && a.gain === q.gain && a.evalsAfter === q.evalsAfter) continue;
    changed.push({ id: q.id, ...a });
    if (a.gain !== null && q.gain === null) report.finalized += 1;
  }
  await repo.recordAttributions(changed);
  report.updated = changed.length;
  return report;
}
