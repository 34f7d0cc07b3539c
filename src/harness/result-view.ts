import type { EvaluationOutcome, EvaluationProgress } from './evaluation.js';
import type { EvalResult, ScenarioResult } from './result.js';

/** How `kernelseek eval` shows a result: a per-scenario table and a summary, in plain text. */

function ms(v: number | null | undefined): string {
  if (typeof v !== 'number') return '-';
  return v >= 100 ? v.toFixed(1) : v.toPrecision(4);
}

function ratio(num: number | null | undefined, den: number | null | undefined): string {
  return typeof num === 'number' && typeof den === 'number' && num > 0 && den > 0 ? `${(num / den).toFixed(2)}x` : '-';
}

function fixed(v: number | null | undefined, digits: number, suffix = ''): string {
  return typeof v === 'number' && Number.isFinite(v) ? `${v.toFixed(digits)}${suffix}` : '-';
}

function sci(v: number | null | undefined): string {
  return typeof v === 'number' && Number.isFinite(v) ? v.toExponential(1) : '-';
}

function scenarioStatus(s: ScenarioResult): string {
  const status = typeof s.status === 'string' ? s.status : s.correct ? 'ok' : 'incorrect';
  return status;
}

/** The fastest peer time of a scenario, with its name. */
function bestPeer(s: ScenarioResult): { name: string; ms: number } | null {
  let best: { name: string; ms: number } | null = null;
  for (const [name, t] of Object.entries(s.peer_ms ?? {})) {
    if (typeof t === 'number' && (!best || t < best.ms)) best = { name, ms: t };
  }
  return best;
}

export const SCENARIO_HEADERS = ['scenario', 'status', 'max err', 'tolerance', 'ms', 'baseline ms', 'vs base', 'best peer ms', 'vs peer', 'TFLOP/s', 'GB/s', '% peak'];

/**
 * A rate in three significant digits. Below 0.001 TFLOP/s (a CPU task, a tiny scenario) the figure
 * says nothing in these units and showed as 0.000: a dash instead, GB/s beside it tells the story.
 */
function rate(v: number | null | undefined, floor = 0): string {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return '-';
  if (v < floor) return '—';
  return v >= 100 ? v.toFixed(0) : v.toPrecision(3);
}

export function scenarioRows(result: EvalResult): string[][] {
  return result.scenarios.map((s) => {
    const peer = bestPeer(s);
    return [
      s.id,
      scenarioStatus(s),
      sci(s.max_abs_err),
      sci(s.tolerance),
      ms(s.time_ms),
      ms(s.baseline_ms),
      ratio(s.baseline_ms, s.time_ms),
      peer ? `${ms(peer.ms)} ${peer.name}` : '-',
      ratio(peer?.ms, s.time_ms),
      rate(s.tflops, 0.001),
      rate((s as Record<string, unknown>).gbps as number | undefined),
      fixed(s.pct_of_peak, 1, '%'),
    ];
  });
}

/** Scenarios that did not pass, with the harness's reason (the table has no room for it). */
export function failureLines(result: EvalResult, limit = 20): string[] {
  const failed = result.scenarios.filter((s) => !s.correct && s.reason);
  const lines = failed.slice(0, limit).map((s) => `  ${s.id}: ${s.reason}`);
  if (failed.length > limit) lines.push(`  ... and ${failed.length - limit} more`);
  return lines;
}

/** Where the harness's time went: start-up (`time_spent`: checks and compiles, executors) and the
 * scenarios' stages summed (`stage_seconds`), when the result says. */
function stageTotals(r: EvalResult): string {
  const totals = { correctness: 0, timing: 0 };
  let seen = false;
  for (const sc of r.scenarios) {
    const st = (sc as Record<string, unknown>).stage_seconds as Partial<typeof totals> | undefined;
    if (!st) continue;
    seen = true;
    totals.correctness += st.correctness ?? 0;
    totals.timing += st.timing ?? 0;
  }
  const spent = (r as Record<string, unknown>).time_spent as Record<string, number> | undefined;
  const parts = [
    ...(spent ? (['build', 'start'] as const).filter((k) => typeof spent[k] === 'number').map((k) => `${k} ${fixed(spent[k], 1, ' s')}`) : []),
    ...(seen ? [`correctness ${fixed(totals.correctness, 1, ' s')}`, `timing ${fixed(totals.timing, 1, ' s')}`] : []),
    // The timing stage waiting for the peers' executor to finish starting (torch, reference.py).
    ...(spent && typeof spent.peers_wait === 'number' && spent.peers_wait >= 0.05 ? [`waiting for the peers ${fixed(spent.peers_wait, 1, ' s')}`] : []),
  ];
  return parts.length > 0 ? `: ${parts.join(', ')}` : '';
}

export function summaryLines(outcome: EvaluationOutcome & { status: Exclude<EvaluationOutcome['status'], 'harness_error'> }): string[] {
  const r = outcome.result;
  const s = r.summary;
  const lines: string[] = [];
  const verdict = r.correct ? 'CORRECT' : 'NOT CORRECT';
  lines.push(`${r.task}: ${r.status} — ${verdict} on ${s.correct}/${s.scenarios} scenarios (${fixed(s.seconds, 1, ' s')} in the harness${stageTotals(r)})`);
  lines.push(`speedup vs baseline (geomean): ${fixed(s.speedup_vs_baseline_geomean, 2, 'x')}`);
  const peers = Object.entries(s.speedup_vs_peer_geomean);
  if (peers.length > 0) {
    lines.push(`speedup vs peers (geomean): ${peers.map(([n, v]) => `${n} ${fixed(v, 2, 'x')}`).join(', ')}${s.best_peer ? `; fastest peer: ${s.best_peer}` : ''}`);
  }
  const goal = (s as Record<string, unknown>).goal as { vs?: string; target?: number; value?: number | null; met?: boolean } | null | undefined;
  if (goal && typeof goal.target === 'number') {
    lines.push(`goal: ${goal.target}x vs ${goal.vs} — ${fixed(goal.value, 2, 'x')}, ${goal.met ? 'met' : 'not met'}`);
  }
  lines.push(`% of peak (median): ${fixed(s.pct_of_peak_median, 1, '%')}`);
  const c = r.compile;
  const res = [c.registers != null ? `${c.registers} registers` : '', c.smem_bytes != null ? `${c.smem_bytes} B shared memory` : '', c.spills != null ? `${c.spills} spills` : '']
    .filter(Boolean)
    .join(', ');
  const cached = (c as Record<string, unknown>).cached === true ? ' (cached)' : '';
  lines.push(`compile: ${fixed(c.seconds, 1, ' s')}${cached}${res ? `; ${res}` : ''}`);
  const flags = Array.isArray(r.flags) ? (r.flags as unknown[]).map(String) : [];
  if (flags.length > 0) lines.push(`flags: ${flags.join(', ')}`);
  const e = outcome.executor;
  const where = [r.device, r.gpu ?? e?.gpuName, e?.driver ? `driver ${e.driver}` : '', e?.harnessVersion ?? r.harness_version ? `harness ${e?.harnessVersion ?? String(r.harness_version)}` : '']
    .filter(Boolean)
    .join(', ');
  lines.push(`ran on: ${outcome.worker} (${where}); harness process ${outcome.wallSeconds.toFixed(1)} s`);
  for (const m of r.messages) lines.push(`note: ${m}`);
  return lines;
}

/** One line for a progress event; undefined for events a plain (non-terminal) log skips. */
export function progressLine(p: EvaluationProgress, verbose: boolean): string | undefined {
  const count = p.i !== undefined && p.n !== undefined ? `[${p.i + 1}/${p.n}] ` : '';
  if (p.phase === 'scenario' || p.phase === 'compile' || p.phase === 'queued' || p.phase === 'refused' || p.phase === 'done' || verbose) {
    return `${count}${p.message ?? p.phase}`;
  }
  return undefined;
}

const verdictWord = (v: unknown) => (v === 'faster' || v === 'slower' || v === 'same' ? v : '');

/** `1.31x [1.28-1.34] faster`: a speedup, its 95 % interval and the verdict, as far as the result has them. */
function withInterval(x: number | null | undefined, ci: unknown, verdict: unknown): string {
  if (typeof x !== 'number' || !Number.isFinite(x)) return '-';
  const range = Array.isArray(ci) && typeof ci[0] === 'number' && typeof ci[1] === 'number' ? ` [${ci[0].toFixed(2)}-${ci[1].toFixed(2)}]` : '';
  const word = verdictWord(verdict);
  return `${x.toFixed(2)}x${range}${word ? ` ${word}` : ''}`;
}

export const VERDICT_HEADERS = ['scenario', 'status', 'ms', 'vs baseline [95 %] verdict', 'vs strongest peer [95 %] verdict', 'max err / tol', 'reason'];

/**
 * The per-scenario table the model reads a result from, for people: each scenario's time, its
 * speedup against the baseline and against the strongest peer with the 95 % interval and the
 * harness's verdict, the error against the tolerance, and why a scenario failed.
 */
export function verdictRows(result: EvalResult): string[][] {
  const strongest = result.summary.best_peer;
  return result.scenarios.map((s) => {
    const peerMs = strongest ? s.peer_ms?.[strongest] : bestPeer(s)?.ms;
    const peerName = strongest ?? bestPeer(s)?.name;
    const vsPeer = typeof peerMs === 'number' && typeof s.time_ms === 'number' && s.time_ms > 0 ? peerMs / s.time_ms : null;
    const vsBase = typeof s.baseline_ms === 'number' && typeof s.time_ms === 'number' && s.time_ms > 0 ? s.baseline_ms / s.time_ms : null;
    return [
      s.id,
      scenarioStatus(s),
      ms(s.time_ms),
      withInterval(vsBase, s.speedup_vs_baseline_ci, s.verdict_vs_baseline),
      peerName ? `${peerName} ${withInterval(vsPeer, s.speedup_vs_peer_ci?.[peerName], s.verdict_vs_peer?.[peerName])}` : '-',
      `${sci(s.max_abs_err)} / ${sci(s.tolerance)}`,
      s.correct ? '' : (s.reason ?? ''),
    ];
  });
}

/** The whole result's summary line against the baseline and every peer, with intervals and verdicts. */
export function verdictSummary(result: EvalResult): string[] {
  const s = result.summary;
  const lines = [`geomean vs baseline: ${withInterval(s.speedup_vs_baseline_geomean, s.speedup_vs_baseline_ci, s.verdict_vs_baseline)}`];
  for (const [peer, v] of Object.entries(s.speedup_vs_peer_geomean)) {
    lines.push(`geomean vs ${peer}${peer === s.best_peer ? ' (strongest peer)' : ''}: ${withInterval(v, s.speedup_vs_peer_ci?.[peer], s.verdict_vs_peer?.[peer])}`);
  }
  if (s.verdict_vs_incumbent !== undefined) {
    lines.push(`vs the run's best so far, timed beside it: ${withInterval(s.speedup_vs_incumbent_geomean, s.speedup_vs_incumbent_ci, s.verdict_vs_incumbent)}`);
  }
  return lines;
}

/**
 * The first lines of why an evaluation failed, for a status line or a terminal: the compiler's
 * errors (lines that say error first), the first failing scenarios with their reasons, or the
 * harness's messages. Empty for a correct result.
 */
export function failureSummary(result: EvalResult, max = 3): string[] {
  if (result.status === 'ok' && result.correct) return [];
  const log = (result.compile?.log ?? '').split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '');
  if (result.status === 'compile_error' && log.length > 0) {
    const errors = log.filter((l) => /\berror\b/i.test(l));
    return (errors.length > 0 ? errors : log).slice(0, max);
  }
  const failing = result.scenarios.filter((s) => !s.correct).slice(0, max).map((s) => `${s.id}: ${s.reason ?? scenarioStatus(s)}`);
  if (failing.length > 0) return failing;
  return [...result.messages, ...log].slice(0, max);
}
