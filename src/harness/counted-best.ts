import { BASELINE_SPEEDUP, beatsIncumbent, gainFiguresOf, type GainFigures } from './significance.js';

/**
 * The one source of "the best" (issue 42). Every figure that calls itself a run's best, a gain or a
 * credit — the bank's placeholders, decision cards, the status card, the final summary, the digest
 * and its attributions, `kernelseek runs`, export — comes from `countedBest` over the run's
 * evaluations. A result counts only when the harness measured it on the task's full scenario set and
 * said it is correct everywhere (status ok); a quick-subset figure never counts, and wherever it is
 * shown it says "quick". Among counted results a later one becomes the best only when it beats the
 * best before it by the harness's interval (src/harness/significance.ts), the rule the engine uses.
 */

/** What counting reads of an evaluation (an `evaluations` row has all of it). */
export interface CountableEvaluation {
  id?: number | null;
  seq: number | null;
  status: string;
  correct: boolean | null;
  /** The set it was measured on: `all` (the full set) or `quick`. */
  scenarios: string;
  speedupVsBaseline: number | null;
  speedupVsBestPeer?: number | null;
  /** The harness's result (or its summary): the interval and verdict the gain rule reads. */
  result?: unknown;
}

/**
 * The full-set evaluation a quick run's best gets when the run ends (`runs.state.confirmation`): the
 * same kernel measured on every scenario. It counts like a full-set evaluation, after all of them.
 */
export interface FullSetCheck {
  status: string;
  correct: boolean;
  speedupVsBaseline: number | null;
  speedupVsBestPeer?: number | null;
  /** The summary's interval and verdict vs the baseline, when the check kept them. */
  ci?: [number, number] | null;
  verdict?: string | null;
  /** The evaluation (seq) of the quick best it checked. */
  ofSeq?: number | null;
}

/** A run's counted best. */
export interface CountedBest {
  /** The evaluations row; null when the best is the full-set check of a quick run's best. */
  evaluationId: number | null;
  /** Its seq (for the full-set check: the seq of the quick best it checked). */
  seq: number;
  speedupVsBaseline: number;
  speedupVsBestPeer: number | null;
  /** The strongest peer's name, when the result says. */
  peer: string | null;
  /** True when the figure is the end-of-run full-set check of a quick run's best. */
  fullSetCheck: boolean;
}

const finite = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

/** Counted: measured on the full set, the harness's status ok, correct on every scenario. */
export function isCounted(e: Pick<CountableEvaluation, 'status' | 'correct' | 'scenarios' | 'speedupVsBaseline'>): boolean {
  return e.status === 'ok' && e.correct === true && e.scenarios === 'all' && finite(e.speedupVsBaseline);
}

function peerOf(result: unknown): string | null {
  const peer = (result as { summary?: { best_peer?: unknown } } | null | undefined)?.summary?.best_peer;
  return typeof peer === 'string' ? peer : null;
}

function checkFigures(c: FullSetCheck): GainFigures {
  const ci = Array.isArray(c.ci) && finite(c.ci[0]) && finite(c.ci[1]) ? c.ci : null;
  const verdict = c.verdict === 'faster' || c.verdict === 'slower' || c.verdict === 'same' ? c.verdict : null;
  return { speedupVsBaseline: c.speedupVsBaseline, ciLow: ci?.[0] ?? null, ciHigh: ci?.[1] ?? null, verdict, vsIncumbent: null };
}

/**
 * Every step of the run's counted best over `history` (any order; pending and unnumbered rows are
 * ignored), oldest first: each result that became the best, up to and including evaluation `through`
 * when given; then the full-set check, when given and it beats them. The last step is the best.
 */
export function countedBestSteps(history: readonly CountableEvaluation[], options: { through?: number; fullSetCheck?: FullSetCheck | null } = {}): CountedBest[] {
  const rows = history
    .filter((e) => e.seq != null && e.status !== 'pending' && (options.through === undefined || e.seq <= options.through))
    .sort((a, b) => a.seq! - b.seq!);
  const steps: CountedBest[] = [];
  const incumbent = () => steps.at(-1)?.speedupVsBaseline ?? BASELINE_SPEEDUP;
  for (const e of rows) {
    if (!isCounted(e) || !beatsIncumbent(gainFiguresOf(e), incumbent())) continue;
    steps.push({
      evaluationId: e.id ?? null,
      seq: e.seq!,
      speedupVsBaseline: e.speedupVsBaseline!,
      speedupVsBestPeer: finite(e.speedupVsBestPeer) ? e.speedupVsBestPeer : null,
      peer: peerOf(e.result),
      fullSetCheck: false,
    });
  }
  const c = options.through === undefined ? options.fullSetCheck : null;
  if (c && c.status === 'ok' && c.correct && finite(c.speedupVsBaseline) && beatsIncumbent(checkFigures(c), incumbent())) {
    steps.push({
      evaluationId: null,
      seq: c.ofSeq ?? 0,
      speedupVsBaseline: c.speedupVsBaseline,
      speedupVsBestPeer: finite(c.speedupVsBestPeer) ? c.speedupVsBestPeer : null,
      peer: null,
      fullSetCheck: true,
    });
  }
  return steps;
}

/**
 * The run's counted best (the last of `countedBestSteps`), or null when no counted result beat the
 * baseline. Pure: the same history gives the same best on every surface.
 */
export function countedBest(history: readonly CountableEvaluation[], options: { through?: number; fullSetCheck?: FullSetCheck | null } = {}): CountedBest | null {
  return countedBestSteps(history, options).at(-1) ?? null;
}

/**
 * The gain that followed a question: the counted best through evaluation `atSeq` (the baseline's 1.0
 * when there is none) and through `untilSeq`, the last evaluation of its window. Quick-subset results
 * never move either, so a quick figure is never credited to a question.
 */
export function countedGain(history: readonly CountableEvaluation[], atSeq: number, untilSeq: number): { before: number; after: number; gain: number } {
  const before = countedBest(history, { through: atSeq })?.speedupVsBaseline ?? BASELINE_SPEEDUP;
  const after = countedBest(history, { through: Math.max(atSeq, untilSeq) })?.speedupVsBaseline ?? before;
  return { before, after, gain: after / before };
}

/** A stored full-set check (`runs.state.confirmation`, any shape an engine wrote), or null. */
export function fullSetCheckOf(raw: unknown): FullSetCheck | null {
  if (!raw || typeof raw !== 'object') return null;
  const c = raw as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  if (typeof c.status !== 'string' || typeof c.correct !== 'boolean') return null;
  const ci = Array.isArray(c.ci) && c.ci.length === 2 && num(c.ci[0]) !== null && num(c.ci[1]) !== null ? ([c.ci[0], c.ci[1]] as [number, number]) : null;
  return {
    status: c.status,
    correct: c.correct,
    speedupVsBaseline: num(c.speedupVsBaseline),
    speedupVsBestPeer: num(c.speedupVsBestPeer),
    ci,
    verdict: typeof c.verdict === 'string' ? c.verdict : null,
    ofSeq: num(c.ofSeq),
  };
}
