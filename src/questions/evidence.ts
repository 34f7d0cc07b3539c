import type { Evaluation } from '../db/index.js';
import { EvalResultSchema, type EvalResult } from '../harness/result.js';
import { countedBest } from '../harness/counted-best.js';

/**
 * Measured evidence: named values computed from a run's evaluation history. Bank text refers to them
 * as placeholders (`{pct_of_peak}`); a question whose placeholder has no value for a run is not
 * selectable, so a question never states a figure that was not measured.
 */

type Format = 'count' | 'speedup' | 'percent' | 'fraction' | 'text' | 'list';

interface EvidenceSpec {
  format: Format;
  description: string;
}

/**
 * Every evidence name a bank question may use, with how its value is written into the text. Counts of
 * something going wrong are absent when zero: a question that states one presupposes there is some.
 */
export const EVIDENCE = {
  evals: { format: 'count', description: 'evaluations finished in this run; absent before the first' },
  evals_since_gain: { format: 'count', description: 'evaluations since the last new best (all of them when there was none); absent when the latest was a new best' },
  best_speedup: { format: 'speedup', description: 'the counted best speedup over the baseline (geomean; full set, correct), e.g. 1.23x' },
  best_vs_peer: { format: 'speedup', description: "the counted best candidate's speedup over the strongest peer (geomean)" },
  peer: { format: 'text', description: 'name of the strongest peer the best candidate was timed against' },
  last_gain: { format: 'speedup', description: 'size of the last new counted best over the best before it (the baseline counts as 1.00x)' },
  failing_streak: { format: 'count', description: 'candidates in a row, up to the latest, that failed (did not compile, crashed, timed out, were wrong or rejected); absent when the latest passed' },
  last_failure: { format: 'text', description: 'how the latest failing candidate failed, e.g. "wrong results"' },
  pct_of_peak: { format: 'percent', description: "median percent of the device's peak reached by the best candidate over its scenarios" },
  scenarios: { format: 'count', description: 'scenarios the best candidate was timed on' },
  slowest_n: { format: 'count', description: 'how many scenarios slowest_ids names' },
  slowest_ids: { format: 'list', description: 'ids of the slowest scenarios of the best candidate, slowest first' },
  slowest_share: { format: 'fraction', description: "share of the best candidate's total time spent in its slowest_n slowest scenarios" },
  weakest_scenario: { format: 'text', description: 'id of the scenario where the best candidate gains least over the baseline' },
  weakest_speedup: { format: 'speedup', description: 'the speedup over the baseline in weakest_scenario' },
  behind_peer: { format: 'count', description: 'scenarios where the best candidate is still slower than the fastest peer; absent when there are none' },
  target: { format: 'speedup', description: "the run's goal (only when the caller passes it)" },
} as const satisfies Record<string, EvidenceSpec>;

export type EvidenceName = keyof typeof EVIDENCE;
export const EVIDENCE_NAMES = Object.keys(EVIDENCE) as EvidenceName[];

export type EvidenceValue = number | string | string[];
/** The values measured for one run; a missing name means it could not be measured. */
export type Evidence = Partial<Record<EvidenceName, EvidenceValue>>;

/** The fields of an `evaluations` row that evidence is computed from (`scenarios`: only full-set results count). */
export type EvaluationRecord = Pick<Evaluation, 'seq' | 'status' | 'correct' | 'scenarios' | 'speedupVsBaseline' | 'speedupVsBestPeer' | 'result'>;

export function isEvidenceName(name: string): name is EvidenceName {
  return Object.hasOwn(EVIDENCE, name);
}

const FAILURE_WORDS: Record<string, string> = {
  compile_error: 'did not compile',
  runtime_error: 'crashed',
  timeout: 'timed out',
  incorrect: 'wrong results',
  rejected: 'rejected by the harness',
  error: 'the harness could not evaluate it',
  ok: 'wrong results',
};

/** A candidate counts (for bests and gains) only when the harness says it is correct everywhere. */
export function isCorrect(e: Pick<EvaluationRecord, 'status' | 'correct' | 'speedupVsBaseline'>): boolean {
  return e.status === 'ok' && e.correct === true && typeof e.speedupVsBaseline === 'number' && Number.isFinite(e.speedupVsBaseline);
}

function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const finite = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

function parseResult(raw: Record<string, unknown> | null): EvalResult | undefined {
  if (!raw) return undefined;
  const parsed = EvalResultSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

function addScenarioEvidence(out: Evidence, result: EvalResult, slowestN: number): void {
  const pct = finite(result.summary.pct_of_peak_median)
    ? result.summary.pct_of_peak_median
    : median(result.scenarios.map((s) => s.pct_of_peak).filter(finite));
  if (pct !== undefined) out.pct_of_peak = pct;
  if (result.scenarios.length > 0) out.scenarios = result.scenarios.length;

  const timed = result.scenarios.filter((s) => finite(s.time_ms) && s.time_ms > 0);
  // A share over all of the scenarios says nothing; there must be some left outside the slowest N.
  if (timed.length > slowestN) {
    const bySlowest = [...timed].sort((a, b) => b.time_ms! - a.time_ms! || a.id.localeCompare(b.id));
    const total = timed.reduce((sum, s) => sum + s.time_ms!, 0);
    const top = bySlowest.slice(0, slowestN);
    out.slowest_n = slowestN;
    out.slowest_ids = top.map((s) => s.id);
    out.slowest_share = top.reduce((sum, s) => sum + s.time_ms!, 0) / total;
  }

  const withBaseline = timed.filter((s) => finite(s.baseline_ms) && s.baseline_ms > 0);
  if (withBaseline.length > 0) {
    const weakest = withBaseline
      .map((s) => ({ id: s.id, speedup: s.baseline_ms! / s.time_ms! }))
      .sort((a, b) => a.speedup - b.speedup || a.id.localeCompare(b.id))[0]!;
    out.weakest_scenario = weakest.id;
    out.weakest_speedup = weakest.speedup;
  }

  const withPeers = timed.filter((s) => Object.values(s.peer_ms ?? {}).some(finite));
  if (withPeers.length > 0) {
    const behind = withPeers.filter((s) => s.time_ms! > Math.min(...Object.values(s.peer_ms ?? {}).filter(finite))).length;
    if (behind > 0) out.behind_peer = behind;
  }
}

/**
 * Computes the evidence for a run from its evaluation history (any order; pending rows are ignored).
 * Pure: the same history always gives the same values.
 */
export function computeEvidence(history: readonly EvaluationRecord[], options: { slowestN?: number; target?: number } = {}): Evidence {
  const slowestN = options.slowestN ?? 3;
  const finished = history.filter((e) => e.status !== 'pending' && e.seq != null).sort((a, b) => a.seq! - b.seq!);
  const out: Evidence = {};
  if (finished.length > 0) out.evals = finished.length;
  if (options.target !== undefined && Number.isFinite(options.target)) out.target = options.target;

  // The best is the counted best (src/harness/counted-best.ts): a quick-subset figure never becomes a
  // question's "best", and the baseline (1.00x) is where it starts.
  const rows = finished;
  const best = countedBest(rows);
  const bestEval = best ? finished.find((e) => e.seq === best.seq) : undefined;
  if (best) {
    const before = countedBest(rows, { through: best.seq - 1 })?.speedupVsBaseline ?? 1;
    out.last_gain = best.speedupVsBaseline / before;
  }
  const sinceGain = finished.filter((e) => e.seq! > (best?.seq ?? 0)).length;
  if (sinceGain > 0) out.evals_since_gain = sinceGain;

  let streak = 0;
  while (streak < finished.length && !isCorrect(finished[finished.length - 1 - streak]!)) streak += 1;
  if (streak > 0) {
    out.failing_streak = streak;
    const last = finished[finished.length - 1]!;
    out.last_failure = FAILURE_WORDS[last.status] ?? last.status;
  }

  // Without a correct candidate faster than the baseline, figures of "the best" would describe
  // nothing the agent made, so the best-candidate evidence stays unmeasured.
  if (best && bestEval) {
    out.best_speedup = best.speedupVsBaseline;
    const result = parseResult(bestEval.result);
    if (finite(bestEval.speedupVsBestPeer)) {
      out.best_vs_peer = bestEval.speedupVsBestPeer;
      if (result?.summary.best_peer) out.peer = result.summary.best_peer;
    }
    if (result) addScenarioEvidence(out, result, slowestN);
  }
  return out;
}

/** The value as it reads in a question: `1.23x`, `31%`, `a, b, c`. */
export function formatEvidence(name: EvidenceName, value: EvidenceValue): string {
  const format: Format = EVIDENCE[name].format;
  if (Array.isArray(value)) return value.join(', ');
  if (typeof value === 'string') return value;
  switch (format) {
    case 'count':
      return String(Math.round(value));
    case 'speedup':
      return `${value.toFixed(2)}x`;
    case 'percent':
      return value < 10 ? `${value.toFixed(1)}%` : `${Math.round(value)}%`;
    case 'fraction':
      return `${Math.round(value * 100)}%`;
    default:
      return String(value);
  }
}
