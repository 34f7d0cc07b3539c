import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { computeEvidence, formatEvidence } from '../../src/questions/index.js';
import { ev, evalResult } from './fixtures.js';

const result = evalResult(
  [
    { id: 's-a', time: 4, baseline: 8, peer: 2, pct: 20 },
    { id: 's-b', time: 3, baseline: 3, peer: 3.5, pct: 30 },
    { id: 's-c', time: 2, baseline: 4, peer: 1, pct: 40 },
    { id: 's-d', time: 1, baseline: 3, peer: 1.5, pct: 50 },
  ],
  { pctMedian: null, bestPeer: 'cudnn' },
);

describe('evidence from an evaluation history', () => {
  it('measures the best candidate, the streaks and the slowest scenarios', () => {
    const history = [
      ev(1, 1.1),
      ev(2, 'compile_error'),
      ev(3, 1.6, { speedupVsBestPeer: 0.7, result }),
      ev(4, 1.5),
      ev(5, 'incorrect'),
      ev(6, 'timeout'),
      ev(7, 'pending'),
    ];
    // Order of rows must not matter.
    const evidence = computeEvidence([...history].reverse(), { slowestN: 2, target: 1.25 });
    expect(evidence).toEqual({
      evals: 6,
      target: 1.25,
      evals_since_gain: 3,
      last_gain: 1.6 / 1.1,
      failing_streak: 2,
      last_failure: 'timed out',
      best_speedup: 1.6,
      best_vs_peer: 0.7,
      peer: 'cudnn',
      pct_of_peak: 35, // median of 20, 30, 40, 50
      scenarios: 4,
      slowest_n: 2,
      slowest_ids: ['s-a', 's-b'],
      slowest_share: 0.7, // (4 + 3) / 10
      weakest_scenario: 's-b',
      weakest_speedup: 1,
      behind_peer: 2, // s-a (4 > 2) and s-c (2 > 1) are slower than the peer; s-b and s-d are faster
    });
  });

  it('prefers the harness median of percent of peak when it gives one', () => {
    const withMedian = evalResult([{ id: 'x', time: 1, pct: 10 }, { id: 'y', time: 2, pct: 20 }], { pctMedian: 12.5 });
    expect(computeEvidence([ev(1, 1.2, { result: withMedian })]).pct_of_peak).toBe(12.5);
  });

  it('leaves unmeasured what was not measured', () => {
    // Nothing correct beats the baseline: no best-candidate figures, every evaluation counts as since the last gain.
    const evidence = computeEvidence([ev(1, 0.8), ev(2, 'incorrect')]);
    expect(evidence).toEqual({ evals: 2, evals_since_gain: 2, failing_streak: 1, last_failure: 'wrong results' });
    expect(computeEvidence([])).toEqual({});
  });

  it('gives no slowest share when every scenario would be among the slowest', () => {
    const small = evalResult([{ id: 'x', time: 1 }, { id: 'y', time: 2 }]);
    const evidence = computeEvidence([ev(1, 1.3, { result: small })], { slowestN: 2 });
    expect(evidence.slowest_share).toBeUndefined();
    expect(evidence.slowest_ids).toBeUndefined();
    expect(evidence.evals_since_gain).toBeUndefined(); // the latest evaluation was the new best
    expect(evidence.failing_streak).toBeUndefined();
  });

  it('ignores a result that does not follow kernelseek.eval/1', () => {
    const evidence = computeEvidence([ev(1, 1.4, { result: { schema: 'something-else' } })]);
    expect(evidence.best_speedup).toBe(1.4);
    expect(evidence.pct_of_peak).toBeUndefined();
    expect(evidence.scenarios).toBeUndefined();
  });

  it('writes each kind of value the way a question reads it', () => {
    expect(formatEvidence('best_speedup', 1.234)).toBe('1.23x');
    expect(formatEvidence('pct_of_peak', 31.4)).toBe('31%');
    expect(formatEvidence('pct_of_peak', 4.25)).toBe('4.3%');
    expect(formatEvidence('slowest_share', 0.643)).toBe('64%');
    expect(formatEvidence('slowest_ids', ['a', 'b'])).toBe('a, b');
    expect(formatEvidence('evals_since_gain', 7)).toBe('7');
    expect(formatEvidence('peer', 'cudnn')).toBe('cudnn');
  });

  it('reads a result the real harness wrote', async () => {
    // Recorded with: python3 -m harness eval --task-dir kernels/cpu_softmax
    //   --candidate kernels/cpu_softmax/baseline.cpp --scenarios quick --json <file>
    const real = JSON.parse(await readFile(new URL('./fixtures/cpu-softmax-quick.result.json', import.meta.url), 'utf8')) as {
      summary: { pct_of_peak_median: number; best_peer: string };
      scenarios: { id: string; time_ms: number }[];
    };
    const evidence = computeEvidence([ev(1, 1.2, { result: real })], { slowestN: 2 });
    expect(evidence.pct_of_peak).toBe(real.summary.pct_of_peak_median);
    expect(evidence.peer).toBe(real.summary.best_peer);
    expect(evidence.scenarios).toBe(real.scenarios.length);
    const slowest = [...real.scenarios].sort((a, b) => b.time_ms - a.time_ms);
    expect(evidence.slowest_ids).toEqual([slowest[0]!.id, slowest[1]!.id]);
    expect(evidence.weakest_scenario).toEqual(expect.any(String));
  });
});
