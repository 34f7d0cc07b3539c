import { describe, expect, it } from 'vitest';
import { evaluationFacts, type EvaluationFacts } from '../../src/agent/decisions/detect.js';
import { beatsIncumbent, describeVerdict, gainFiguresOf } from '../../src/harness/significance.js';
import { computeEvidence } from '../../src/questions/evidence.js';

/** A correct full evaluation whose result carries the harness's interval and verdict vs the baseline. */
function measured(seq: number, point: number, ci: [number, number] | null, verdict: 'faster' | 'slower' | 'same' | null): EvaluationFacts {
  return {
    seq, status: 'ok', correct: true, speedupVsBaseline: point, speedupVsBestPeer: point / 2, scenarios: 'all',
    result: { summary: { speedup_vs_baseline_ci: ci, verdict_vs_baseline: verdict } },
  };
}
const facts = (evaluations: EvaluationFacts[]) => evaluationFacts({ evaluations, runScenarios: 'all', goalVs: 'baseline', lastDecisionEvalSeq: 0 });

describe('a new best only when it is better', () => {
  // The attack: the baseline resubmitted with a comment changed reads 1.03x by noise.
  const noise = measured(1, 1.03, [0.98, 1.07], 'same');

  it('a comment-only resubmission that noise lifts above 1.0 is no best and no gain', () => {
    expect(beatsIncumbent(gainFiguresOf(noise), 1)).toBe(false);
    expect(facts([noise]).best).toBeNull();
    expect(computeEvidence([{ ...noise, result: noise.result ?? null }]).last_gain).toBeUndefined();
  });

  it('a faster candidate must clear the incumbent with the bottom of its interval, not its point figure', () => {
    const first = measured(1, 1.3, [1.25, 1.36], 'faster');
    const barely = measured(2, 1.33, [1.27, 1.4], 'faster'); // faster than the baseline, not than #1
    const clear = measured(3, 1.5, [1.42, 1.57], 'faster');
    expect(facts([first, barely]).best?.seq).toBe(1);
    expect(facts([first, barely, clear]).best?.seq).toBe(3);
    expect(facts([first, barely, clear]).evalsSinceGain).toBe(0);
  });

  it('timed beside the incumbent, the paired comparison decides, whatever the point figures say', () => {
    const beside = (point: number, ci: [number, number], verdict: 'faster' | 'slower' | 'same', inc: [number, number], vInc: 'faster' | 'slower' | 'same') => ({
      ...measured(2, point, ci, verdict),
      result: { summary: { speedup_vs_baseline_ci: ci, verdict_vs_baseline: verdict, speedup_vs_incumbent_geomean: (inc[0] + inc[1]) / 2, speedup_vs_incumbent_ci: inc, verdict_vs_incumbent: vInc } },
    });
    // The best resubmitted: by its own figure vs the baseline it clears the best's 1.30 (noise moved
    // the machine), but beside the best it reads the same.
    const resubmitted = beside(1.4, [1.36, 1.44], 'faster', [0.98, 1.03], 'same');
    expect(beatsIncumbent(gainFiguresOf(resubmitted), 1.3)).toBe(false);
    // Really faster than the best, beside it: a new best even though its point figure vs the baseline
    // (measured in other rounds) is below the best's recorded 1.30.
    const better = beside(1.28, [1.25, 1.31], 'faster', [1.08, 1.12], 'faster');
    expect(beatsIncumbent(gainFiguresOf(better), 1.3)).toBe(true);
    // Faster beside it, but by less than the 1 % margin at the bottom of the interval.
    expect(beatsIncumbent(gainFiguresOf(beside(1.35, [1.3, 1.4], 'faster', [1.004, 1.03], 'faster')), 1.3)).toBe(false);
    expect(gainFiguresOf(measured(1, 1.3, [1.25, 1.36], 'faster')).vsIncumbent).toBeNull();
  });

  it('a "faster" whose interval clears the incumbent by less than 1 % is not a gain worth keeping', () => {
    // One identical kernel in forty reads "faster" at 95 %; its interval then barely clears 1.0.
    expect(beatsIncumbent(gainFiguresOf(measured(1, 1.03, [1.004, 1.06], 'faster')), 1)).toBe(false);
    expect(beatsIncumbent(gainFiguresOf(measured(1, 1.05, [1.02, 1.08], 'faster')), 1)).toBe(true);
  });

  it('a slower or unmeasured verdict never wins, and results without an interval compare point figures', () => {
    expect(beatsIncumbent(gainFiguresOf(measured(1, 1.2, [0.8, 0.95], 'slower')), 1)).toBe(false);
    const old = { speedupVsBaseline: 1.2, result: { summary: {} } };
    expect(beatsIncumbent(gainFiguresOf(old), 1)).toBe(true);
    expect(beatsIncumbent(gainFiguresOf(old), 1.2)).toBe(false);
    expect(beatsIncumbent(gainFiguresOf({ speedupVsBaseline: null, result: null }), 1)).toBe(false);
  });

  it('says what the interval says', () => {
    expect(describeVerdict(gainFiguresOf(noise))).toBe('not distinguishable from the baseline (95 % interval 0.980x-1.070x)');
    expect(describeVerdict(gainFiguresOf(measured(1, 1.3, [1.25, 1.36], 'faster')))).toMatch(/^faster than the baseline/);
    expect(describeVerdict(gainFiguresOf({ speedupVsBaseline: 1, result: null }))).toBeNull();
  });
});
