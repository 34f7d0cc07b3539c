import type { EvalResult } from '../harness/result.js';
import type { EvaluationOutcome } from '../harness/evaluation.js';

/**
 * Results travel through Redis (a job's return value, kept for a day). A full evaluation of a
 * large task with a long compile log can reach megabytes; past the cap we keep what the agent and
 * the person need (status, summary, every scenario's verdict and figures) and cut the logs.
 */
export const MAX_RESULT_BYTES = 512 * 1024;

const LOG_TAIL = 8 * 1024;
const MESSAGE_CHARS = 2000;
const MAX_MESSAGES = 50;
/** The per-scenario fields of DESIGN §5 (plus status and reason): kept in the last step. */
const SCENARIO_CORE = ['id', 'params', 'correct', 'status', 'reason', 'max_abs_err', 'tolerance', 'time_ms', 'baseline_ms', 'peer_ms', 'tflops', 'gbps', 'pct_of_peak'];

const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

function cut(text: string, max: number): string {
  return text.length <= max ? text : `[... ${text.length - max} characters cut ...]\n${text.slice(text.length - max)}`;
}

/** Returns the outcome unchanged when it fits; otherwise a trimmed copy whose `trimmed` says what went. */
export function trimOutcome(outcome: EvaluationOutcome, maxBytes = MAX_RESULT_BYTES): EvaluationOutcome {
  const before = size(outcome);
  if (before <= maxBytes || outcome.status === 'harness_error') return outcome;
  const result: EvalResult = structuredClone(outcome.result);
  const steps: string[] = [];
  const fits = () => size({ ...outcome, result }) <= maxBytes;

  if (result.compile.log.length > LOG_TAIL) {
    result.compile.log = cut(result.compile.log, LOG_TAIL);
    steps.push(`compile log cut to its last ${LOG_TAIL >> 10} KiB`);
  }
  if (!fits() && (result.messages.length > MAX_MESSAGES || result.messages.some((m) => m.length > MESSAGE_CHARS))) {
    const dropped = Math.max(0, result.messages.length - MAX_MESSAGES);
    result.messages = result.messages.slice(0, MAX_MESSAGES).map((m) => cut(m, MESSAGE_CHARS));
    if (dropped > 0) result.messages.push(`[${dropped} more messages dropped]`);
    steps.push('messages shortened');
  }
  if (!fits()) {
    result.scenarios = result.scenarios.map((s) => {
      const kept: Record<string, unknown> = {};
      for (const k of SCENARIO_CORE) if (k in s) kept[k] = (s as Record<string, unknown>)[k];
      if (typeof kept.reason === 'string') kept.reason = cut(kept.reason, 500);
      return kept as typeof s;
    });
    steps.push('per-scenario details beyond the schema fields dropped (checks, timing samples)');
  }
  if (!fits()) {
    // Whatever else the harness added at the top level (device info, options, ...).
    const keep = new Set(['schema', 'task', 'device', 'gpu', 'arch', 'status', 'correct', 'summary', 'scenarios', 'compile', 'messages', 'harness_version', 'flags', 'executor']);
    for (const k of Object.keys(result)) if (!keep.has(k)) delete (result as Record<string, unknown>)[k];
    steps.push('extra top-level fields dropped');
  }
  const note = `result trimmed from ${(before / 1024).toFixed(0)} KiB to fit the queue's ${maxBytes >> 10} KiB limit: ${steps.join('; ')}`;
  result.messages.push(note);
  return { ...outcome, result, trimmed: note };
}
