import type { Evaluation } from '../../db/index.js';
import type { EvalResult, ScenarioResult } from '../../harness/result.js';
import type { Task } from '../../harness/task-schema.js';
import { renderTable } from '../../core/text-table.js';
import { failureSummary, VERDICT_HEADERS, verdictRows, verdictSummary } from '../../harness/result-view.js';
import { describeVerdict, gainFiguresOf } from '../../harness/significance.js';
import type { EvaluationReport } from '../reporter.js';

const fmtX = (v: number | null | undefined) => (v == null ? '-' : `${v.toFixed(v >= 10 ? 1 : 3)}x`);
const fmtMs = (v: number | null | undefined) => (v == null ? '-' : `${v < 0.1 ? v.toFixed(4) : v.toFixed(3)} ms`);

/** The run's goal metric: speedup over the best peer or over the baseline, as the task says. */
export function goalSpeedup(task: Task, e: Pick<Evaluation, 'speedupVsBaseline' | 'speedupVsBestPeer'>): number | null {
  return task.goal.vs === 'best_peer' ? e.speedupVsBestPeer : e.speedupVsBaseline;
}

export function resultOf(e: Evaluation): EvalResult | null {
  const r = e.result as (EvalResult & { schema?: string }) | null;
  return r && r.schema === 'kernelseek.eval/1' ? r : null;
}

/** Passed every scenario of a complete evaluation: the only kind that can be a run's best. */
export function isCorrectCandidate(e: Pick<Evaluation, 'status' | 'correct'>): boolean {
  return e.status === 'ok' && e.correct === true;
}

/** ` on the quick subset`: said of every figure measured on a subset (it never counts as a best). */
function subsetLabel(e: Pick<Evaluation, 'scenarios'>): string {
  return e.scenarios === 'all' ? '' : ` on the ${e.scenarios === 'quick' ? 'quick subset' : `scenarios ${e.scenarios}`}`;
}

export function headlineOf(e: Evaluation): string {
  const r = resultOf(e);
  if (!r) {
    const msg = (e.result as { message?: string } | null)?.message;
    return `eval #${e.seq}: ${e.status}${msg ? ` (${msg.split('\n')[0]!.slice(0, 120)})` : ''}`;
  }
  const peer = r.summary.best_peer;
  const parts = [`eval #${e.seq}: ${r.status}`, `${r.summary.correct}/${r.summary.scenarios} correct${subsetLabel(e)}`];
  if (r.summary.speedup_vs_baseline_geomean != null) parts.push(`${fmtX(r.summary.speedup_vs_baseline_geomean)} baseline`);
  if (peer && r.summary.speedup_vs_peer_geomean[peer] != null) parts.push(`${fmtX(r.summary.speedup_vs_peer_geomean[peer])} ${peer}`);
  return parts.join(', ');
}

export function reportOf(e: Evaluation, commit: string | null): EvaluationReport {
  const r = resultOf(e);
  return {
    id: e.id,
    seq: e.seq ?? 0,
    status: e.status,
    correct: e.correct === true,
    scenarios: { total: r?.summary.scenarios ?? 0, correct: r?.summary.correct ?? 0 },
    scenarioSet: e.scenarios,
    speedupVsBaseline: e.speedupVsBaseline,
    speedupVsBestPeer: e.speedupVsBestPeer,
    bestPeer: r?.summary.best_peer ?? null,
    commit,
    headline: headlineOf(e),
    failure: failureOf(e),
    details: detailsOf(e),
  };
}

/** The first lines of why an evaluation failed (the compiler's errors, the failing scenarios); empty when it passed. */
export function failureOf(e: Evaluation, max = 3): string[] {
  const r = resultOf(e);
  if (r) return failureSummary(r, max);
  const detail = e.result as { message?: string; stderrTail?: string } | null;
  return [detail?.message, ...(detail?.stderrTail ?? '').split('\n').slice(-max)].filter((l): l is string => Boolean(l && l.trim())).slice(0, max);
}

/**
 * All of an evaluation's result, for people (`kernelseek show`, `run --verbose`, the thread's files):
 * the speedups with their intervals and verdicts against the baseline and every peer, the
 * per-scenario table, the compiler's whole output when it failed, and the harness's messages.
 */
export function detailsOf(e: Evaluation): string {
  const r = resultOf(e);
  const lines = [headlineOf(e)];
  if (!r) {
    const detail = e.result as { message?: string; stderrTail?: string } | null;
    if (detail?.message) lines.push(detail.message);
    if (detail?.stderrTail) lines.push('', 'Harness output (tail):', detail.stderrTail);
    return lines.join('\n');
  }
  lines.push(...verdictSummary(r));
  if (r.scenarios.length > 0) lines.push('', renderTable(VERDICT_HEADERS, verdictRows(r)));
  if (r.compile.log && r.status !== 'ok') lines.push('', 'Compiler output:', r.compile.log);
  if (r.messages.length > 0) lines.push('', 'Harness messages:', ...r.messages.map((m) => `  ${m}`));
  return lines.join('\n');
}

function ratioVsPeer(s: ScenarioResult, peer: string): number | null {
  const p = s.peer_ms?.[peer];
  return p != null && s.time_ms != null && s.time_ms > 0 ? p / s.time_ms : null;
}

/**
 * What the model reads after `evaluate`: the outcome, the failing scenarios with their reasons and
 * the slowest scenarios against the strongest peer, compactly (the full result is in the store).
 */
export function formatEvaluationForModel(input: {
  evaluation: Evaluation;
  task: Task;
  newBest: boolean;
  best: { seq: number; speedup: number | null } | null;
  commit: string | null;
  budget: { used: number; total: number };
  counts: boolean;
  /** The run's scenario set when it is a subset (quick): its best is the best on these scenarios only. */
  scenarioSet?: { evaluated: number; total: number } | null;
}): string {
  const { evaluation: e, task } = input;
  const r = resultOf(e);
  const lines: string[] = [];
  if (!r) {
    const detail = e.result as { message?: string; stderrTail?: string } | null;
    lines.push(`Evaluation #${e.seq} (${e.scenarios} scenarios) could not produce a result: ${e.status}.`);
    if (detail?.message) lines.push(detail.message);
    if (detail?.stderrTail) lines.push(`Harness output (tail):\n${detail.stderrTail.slice(-2000)}`);
  } else {
    lines.push(`Evaluation #${e.seq} (${e.scenarios} scenarios): ${r.status}; correct on ${r.summary.correct}/${r.summary.scenarios} scenarios.`);
    const peers = Object.entries(r.summary.speedup_vs_peer_geomean)
      .map(([name, v]) => `${fmtX(v)} vs ${name}${name === r.summary.best_peer ? ' (strongest peer)' : ''}`)
      .join('; ');
    lines.push(`Speedup (geomean): ${fmtX(r.summary.speedup_vs_baseline_geomean)} vs baseline${peers ? `; ${peers}` : ''}.`);
    const figures = gainFiguresOf(e);
    const verdict = describeVerdict(figures);
    if (verdict) lines.push(`Against the baseline: ${verdict}; a new best must be faster than the best so far by its whole interval.`);
    const inc = figures.vsIncumbent;
    const beside = inc ? describeVerdict(inc, 'it') : null;
    if (inc && beside) lines.push(`Against the run's best so far, timed beside it: ${fmtX(inc.speedup)}, ${beside}.`);
    if (r.summary.pct_of_peak_median != null) lines.push(`Median share of the device's peak: ${r.summary.pct_of_peak_median.toFixed(1)}%.`);
    const goal = goalSpeedup(task, e);
    lines.push(
      `Goal: ${task.goal.speedup}x vs ${task.goal.vs === 'best_peer' ? 'the strongest peer' : 'the baseline'} — ${goal != null && e.correct && goal >= task.goal.speedup ? 'met' : 'not met'}.`,
    );
    const subset = input.scenarioSet ? ` (on ${input.scenarioSet.evaluated} of ${input.scenarioSet.total} scenarios)` : '';
    if (input.newBest) lines.push(`This is the new best correct candidate of the run${subset}.`);
    else if (input.best) lines.push(`Best correct candidate so far: evaluation #${input.best.seq} (${fmtX(input.best.speedup)} vs baseline${subset}).`);
    else if (e.correct) lines.push('No candidate of the run has beaten the baseline yet.');
    if (!input.counts) lines.push(`(This evaluation covered only the ${e.scenarios} scenarios; a candidate counts for the run on its full scenario set.)`);
    const c = r.compile;
    const compileBits = [`${c.seconds != null ? `${c.seconds.toFixed(1)} s` : '-'}`];
    if (c.registers != null) compileBits.push(`${c.registers} registers`);
    if (c.smem_bytes != null) compileBits.push(`${c.smem_bytes} B shared memory`);
    if (c.spills != null) compileBits.push(`${c.spills} spills`);
    lines.push(`Compile: ${compileBits.join(', ')}.`);
    if (r.status === 'compile_error' || (c.log && r.status !== 'ok')) lines.push(`Compiler output:\n${c.log.slice(-3000)}`);
    const failing = r.scenarios.filter((s) => !s.correct);
    if (failing.length > 0) {
      lines.push(`Failing scenarios (${failing.length} of ${r.scenarios.length}${failing.length > 10 ? ', first 10' : ''}):`);
      for (const s of failing.slice(0, 10)) {
        const err = s.max_abs_err != null ? `max error ${s.max_abs_err.toExponential(2)} vs tolerance ${s.tolerance != null ? s.tolerance.toExponential(2) : '-'}` : '';
        lines.push(`  ${s.id}: ${[s.reason, err].filter(Boolean).join('; ') || 'incorrect'}`);
      }
    }
    const peer = r.summary.best_peer;
    const timed = r.scenarios.filter((s) => s.correct && s.time_ms != null);
    if (timed.length > 0) {
      const rank = (s: ScenarioResult) => (peer ? (ratioVsPeer(s, peer) ?? Infinity) : s.baseline_ms != null && s.time_ms ? s.baseline_ms / s.time_ms : Infinity);
      const slowest = [...timed].sort((a, b) => rank(a) - rank(b)).slice(0, 5);
      lines.push(`Slowest scenarios${peer ? ` against ${peer}` : ' against the baseline'}:`);
      for (const s of slowest) {
        const vsPeer = peer ? `${fmtX(ratioVsPeer(s, peer))} (${fmtMs(s.time_ms)} vs ${fmtMs(s.peer_ms?.[peer])})` : '';
        const vsBase = s.baseline_ms != null && s.time_ms ? `${fmtX(s.baseline_ms / s.time_ms)} vs baseline` : '';
        const peak = s.pct_of_peak != null ? `${s.pct_of_peak.toFixed(1)}% of peak` : '';
        lines.push(`  ${s.id}: ${[vsPeer, vsBase, peak].filter(Boolean).join(', ')}`);
      }
    }
    if (r.messages.length > 0) lines.push(`Harness messages:\n${r.messages.map((m) => `  ${m}`).join('\n')}`);
  }
  lines.push(`Committed to the workspace as ${input.commit ? input.commit.slice(0, 10) : '(no commit)'}. Evaluations used: ${input.budget.used} of ${input.budget.total}.`);
  return lines.join('\n');
}

/** The evaluation history as a table (kept verbatim when old tool results are compacted). */
export function historyTable(evaluations: Evaluation[]): string {
  const rows = evaluations
    .filter((e) => e.status !== 'pending')
    .map((e) => {
      const r = resultOf(e);
      const correct = r ? `${r.summary.correct}/${r.summary.scenarios}` : '-';
      return `| ${e.seq} | ${e.status} | ${correct} | ${fmtX(e.speedupVsBaseline)} | ${fmtX(e.speedupVsBestPeer)} |`;
    });
  return ['| eval | status | correct | vs baseline | vs strongest peer |', '|---|---|---|---|---|', ...rows].join('\n');
}
