import type { Verdict } from './result.js';

/**
 * The one rule for "better" (DESIGN §11: noise never becomes a gain): the run's new best, the bank's
 * gain attribution and the digest's gains all ask it. A candidate beats the incumbent (the run's best
 * so far; before any, the baseline at 1.0) only when the harness says it is faster than the baseline
 * (its 95 % interval lies above 1.01) and the bottom of that interval is above the incumbent's figure
 * (by MIN_GAIN).
 */
export interface GainFigures {
  speedupVsBaseline: number | null;
  /** Lower end of the summary's 95 % interval vs the baseline; null when the result has none. */
  ciLow: number | null;
  ciHigh: number | null;
  verdict: Verdict | null;
  /**
   * Against the run's best so far, timed beside the candidate in the same rounds (the harness's
   * --incumbent); null when the evaluation was not timed against one.
   */
  vsIncumbent: { speedup: number | null; ciLow: number | null; ciHigh: number | null; verdict: Verdict | null } | null;
}

/** The baseline's own figure: a run's incumbent before any candidate beats it. */
export const BASELINE_SPEEDUP = 1;
/**
 * The bottom of the interval must clear the incumbent by this fraction too: a 95 % interval alone
 * still calls one identical kernel in forty "faster", and a run evaluates hundreds; 1 % is below any
 * gain worth keeping and makes a noise "gain" rarer by an order of magnitude.
 */
export const MIN_GAIN = 0.01;

/** The figures of an evaluation row (or anything with its speedup and stored result). */
export function gainFiguresOf(e: { speedupVsBaseline: number | null; result?: unknown }): GainFigures {
  type Summary = { speedup_vs_baseline_ci?: unknown; verdict_vs_baseline?: unknown; speedup_vs_incumbent_geomean?: unknown; speedup_vs_incumbent_ci?: unknown; verdict_vs_incumbent?: unknown };
  const summary = (e.result as { summary?: Summary } | null | undefined)?.summary;
  const end = (ci: unknown, i: number) => (Array.isArray(ci) && typeof ci[i] === 'number' && Number.isFinite(ci[i]) ? (ci[i] as number) : null);
  const verdictOf = (v: unknown): Verdict | null => (v === 'faster' || v === 'slower' || v === 'same' ? v : null);
  const inc = summary?.verdict_vs_incumbent;
  return {
    speedupVsBaseline: e.speedupVsBaseline,
    ciLow: end(summary?.speedup_vs_baseline_ci, 0),
    ciHigh: end(summary?.speedup_vs_baseline_ci, 1),
    verdict: verdictOf(summary?.verdict_vs_baseline),
    vsIncumbent:
      inc === undefined
        ? null
        : {
            speedup: typeof summary?.speedup_vs_incumbent_geomean === 'number' ? summary.speedup_vs_incumbent_geomean : null,
            ciLow: end(summary?.speedup_vs_incumbent_ci, 0),
            ciHigh: end(summary?.speedup_vs_incumbent_ci, 1),
            verdict: verdictOf(inc),
          },
  };
}

/**
 * Whether a correct candidate's figures beat the incumbent. Timed beside it (the harness's
 * --incumbent), the paired comparison decides; otherwise its interval against the baseline must clear
 * the incumbent's point figure; a result without an interval (a harness before intervals) falls back
 * to the point figure, as before.
 */
export function beatsIncumbent(c: GainFigures, incumbent: number): boolean {
  const x = c.speedupVsBaseline;
  if (x == null || !Number.isFinite(x)) return false;
  // Timed beside the incumbent in the same rounds: that comparison decides, by the same margin. (It
  // must also still beat the baseline: an incumbent can only be one that did.)
  if (c.vsIncumbent) {
    const v = c.vsIncumbent;
    return v.verdict === 'faster' && v.ciLow != null && v.ciLow > 1 + MIN_GAIN && (c.verdict == null || c.verdict === 'faster');
  }
  if (c.verdict == null || c.ciLow == null) return x > incumbent;
  return c.verdict === 'faster' && c.ciLow > incumbent * (1 + MIN_GAIN);
}

/**
 * "faster than the baseline (95 % interval 1.020x-1.070x)" and the like, for the model and the people;
 * `what` names the other side of the comparison (the run's best: "it").
 */
export function describeVerdict(c: { verdict: Verdict | null; ciLow: number | null; ciHigh: number | null }, what = 'the baseline'): string | null {
  if (c.verdict == null || c.ciLow == null || c.ciHigh == null) return null;
  const range = `95 % interval ${c.ciLow.toFixed(3)}x-${c.ciHigh.toFixed(3)}x`;
  if (c.verdict === 'same') return `not distinguishable from ${what} (${range})`;
  return `${c.verdict} than ${what} (${range})`;
}
