import { describe, expect, it } from 'vitest';
import { countedBest, countedBestSteps, countedGain, fullSetCheckOf, isCounted, type CountableEvaluation } from '../../src/harness/counted-best.js';
import { attributeQuestion, computeEvidence, fillText, type EvaluationRecord } from '../../src/questions/index.js';
import { selectTopQuestions } from '../../src/digest/summarize.js';

// Issue 42: a quick-subset figure was called "the best" (a bank question said 3.96x while the counted
// best was 2.35x) and credited as a question's gain (4.61x). One function decides the counted best;
// these are the cases that would have caught both.
type Row = CountableEvaluation & EvaluationRecord;
const full = (seq: number, speedup: number, extra: Partial<Row> = {}): Row => ({
  id: 100 + seq,
  seq,
  status: 'ok',
  correct: true,
  scenarios: 'all',
  speedupVsBaseline: speedup,
  speedupVsBestPeer: speedup / 2,
  result: {
    schema: 'kernelseek.eval/1',
    task: 't',
    device: 'cpu',
    status: 'ok',
    correct: true,
    summary: { scenarios: 3, correct: 3, speedup_vs_baseline_geomean: speedup, speedup_vs_peer_geomean: { torch: speedup / 2 }, best_peer: 'torch', pct_of_peak_median: null, seconds: 1 },
    scenarios: [],
    compile: { seconds: 1, log: '' },
    messages: [],
  },
  ...extra,
});
const quick = (seq: number, speedup: number) => full(seq, speedup, { scenarios: 'quick' });

/** 2.35x counted at #2; #3 and #4 are quick-subset results at 3.96x and 4.61x. */
const HISTORY = [full(1, 1.2), full(2, 2.35), quick(3, 3.96), quick(4, 4.61), full(5, 0.9, { status: 'incorrect', correct: false })];

describe('countedBest', () => {
  it('is the best full-set, correct result; a quick figure never counts, however high', () => {
    expect(isCounted(quick(3, 3.96))).toBe(false);
    expect(isCounted(full(1, 1.2, { status: 'rejected' }))).toBe(false);
    expect(countedBest(HISTORY)).toMatchObject({ seq: 2, speedupVsBaseline: 2.35, speedupVsBestPeer: 1.175, peer: 'torch', evaluationId: 102, fullSetCheck: false });
    expect(countedBestSteps(HISTORY).map((s) => s.seq)).toEqual([1, 2]);
    expect(countedBest([quick(1, 5)])).toBeNull();
    expect(countedBest([])).toBeNull();
  });

  it('takes a result as the best only when it beats the one before by the harness interval', () => {
    const ci = (lo: number, hi: number, verdict = 'faster') => ({ summary: { speedup_vs_baseline_ci: [lo, hi], verdict_vs_baseline: verdict } });
    // #2's point figure is higher, but its interval does not clear #1's 1.5x: noise is no new best.
    const noisy = [full(1, 1.5, { result: ci(1.45, 1.55) }), full(2, 1.56, { result: ci(1.5, 1.62) })];
    expect(countedBest(noisy)?.seq).toBe(1);
    expect(countedBest([...noisy, full(3, 1.8, { result: ci(1.7, 1.9) })])?.seq).toBe(3);
  });

  it("counts a quick run's full-set check after every evaluation, and only when it is correct", () => {
    const check = fullSetCheckOf({ status: 'ok', correct: true, speedupVsBaseline: 1.42, speedupVsBestPeer: 0.8, scenarios: 11, ofSeq: 3 });
    expect(countedBest([quick(3, 1.6)], { fullSetCheck: check })).toMatchObject({ seq: 3, speedupVsBaseline: 1.42, evaluationId: null, fullSetCheck: true });
    expect(countedBest([quick(3, 1.6)], { fullSetCheck: fullSetCheckOf({ status: 'incorrect', correct: false, speedupVsBaseline: 1.5, scenarios: 11 }) })).toBeNull();
    // A counted result above the check stays the best.
    expect(countedBest([full(1, 2), quick(3, 2.5)], { fullSetCheck: check })?.seq).toBe(1);
    expect(fullSetCheckOf(null)).toBeNull();
    expect(fullSetCheckOf({ correct: 'yes' })).toBeNull();
  });

  it('credits a question only with counted gains', () => {
    expect(countedGain(HISTORY, 2, 4)).toEqual({ before: 2.35, after: 2.35, gain: 1 });
    expect(countedGain(HISTORY, 1, 2)).toEqual({ before: 1.2, after: 2.35, gain: 2.35 / 1.2 });
    expect(countedGain(HISTORY, 0, 1)).toEqual({ before: 1, after: 1.2, gain: 1.2 });
  });
});

describe('every figure of "the best" comes from it', () => {
  it("the bank's placeholders state the counted best, not the quick 3.96x", () => {
    const evidence = computeEvidence(HISTORY);
    expect(evidence.best_speedup).toBe(2.35);
    expect(evidence.best_vs_peer).toBe(1.175);
    expect(evidence.last_gain).toBeCloseTo(2.35 / 1.2);
    expect(evidence.evals_since_gain).toBe(3);
    expect(fillText({ text: 'The best candidate stands at {best_speedup}, {best_vs_peer} against {peer}.' }, evidence)).toBe(
      'The best candidate stands at 2.35x, 1.18x against torch.',
    );
    // Only quick results: nothing counted, so no question can state a best.
    expect(computeEvidence([quick(1, 3.96)]).best_speedup).toBeUndefined();
  });

  it('attribution gives a question asked before the quick 4.61x no gain', () => {
    expect(attributeQuestion({ evalSeqAtAsk: 2 }, HISTORY, { k: 3, runEnded: true })).toEqual({ bestBefore: 2.35, bestAfter: 2.35, gain: 1, evalsAfter: 3 });
  });

  it("the digest's top questions skip a gain reached only by a quick result", () => {
    const window = { from: new Date('2026-01-01T00:00:00Z'), to: new Date('2026-01-02T00:00:00Z') };
    const when = new Date('2026-01-01T12:00:00Z');
    const row = (e: CountableEvaluation) => ({ ...e, id: e.id!, runId: 'ks-r', task: 't', arch: 'cpu', correct: e.correct, speedupVsBestPeer: e.speedupVsBestPeer ?? null, bestPeer: 'torch', harnessSeconds: 1, finishedAt: when }) as never;
    // A stale attribution (from before issue 42) says 4.61x: no counted result reached it, so it is not listed.
    const q = { id: 1, runId: 'ks-r', task: 't', source: 'bank' as const, author: 'bank', bankId: 'b', text: 'Q?', evalSeqAtAsk: 2, bestBefore: 2.35, bestAfter: 4.61, gain: 4.61 / 2.35, evalsAfter: 3, createdAt: when };
    expect(selectTopQuestions({ gainQuestions: [q], runEvaluations: HISTORY.map(row) }, window, 5)).toEqual([]);
  });
});
