import type { Verdict } from './result.js';

/**
 * The one rule for "better" (DESIGN §11: noise never becomes a gain): the run's new best, the bank's
 * gain attribution and the digest's gains all ask it. A candidate beats the incumbent (the run's best
 * so far; before any, the baseline at 1.0) only when the harness says it is faster than the baseline
 * (its 95 % interval excludes 1.0) and the bottom of that interval is above the incumbent's figure
 * (by MIN_GAIN).
 */
export interface GainFigures {
  speedupVsBaseline: number | null;
  /** Lower end of the summary's 95 % interval vs the baseline; null when the result has none. */
  ciLow: number | null;
  ciHigh: number | null;
  verdict: Verdict | null;
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
  const summary = (e.result as { summary?: { speedup_vs_baseline_ci?: unknown; verdict_vs_baseline?: unknown } } | null | undefined)?.summary;
  const ci = summary?.speedup_vs_baseline_ci;
  const end = (i: number) => (Array.isArray(ci) && typeof ci[i] === 'number' && Number.isFinite(ci[i]) ? (ci[i] as number) : null);
  const v = summary?.verdict_vs_baseline;
  return { speedupVsBaseline: e.speedupVsBaseline, ciLow: end(0), ciHigh: end(1), verdict: v === 'faster' || v === 'slower' || v === 'same' ? v : null };
}

/**
 * Whether a correct candidate's figures beat the incumbent's point figure. A result without an
 * interval (a harness before intervals, or the CUDA path, which does not pair rounds yet) falls back to
 * the point figure, as before.
 */
export function beatsIncumbent(c: GainFigures, incumbent: number): boolean {
  const x = c.speedupVsBaseline;
  if (x == null || !Number.isFinite(x)) return false;
  if (c.verdict == null || c.ciLow == null) return x > incumbent;
  return c.verdict === 'faster' && c.ciLow > incumbent * (1 + MIN_GAIN);
}

/** "faster than the baseline (95 %: 1.02x-1.07x)" and the like, for the model and the people. */
export function describeVerdict(c: GainFigures): string | null {
  if (c.verdict == null || c.ciLow == null || c.ciHigh == null) return null;
  const range = `95 % interval ${c.ciLow.toFixed(3)}x-${c.ciHigh.toFixed(3)}x`;
  if (c.verdict === 'same') return `not distinguishable from the baseline (${range})`;
  return `${c.verdict} than the baseline (${range})`;
}
