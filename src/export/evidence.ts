import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import type { EvalResult, ScenarioResult } from '../harness/result.js';
import type { LoadedTask } from '../harness/tasks.js';
import type { ChosenEvaluation } from './choose.js';
import type { KernelDiff } from './diff.js';
import { EVIDENCE_SCHEMA, type Evidence, type Figure, type Interval, type ScenarioEvidence, type Verdict } from './evidence-types.js';
import { sha256, type KernelFile } from './kernel-files.js';
import { scrubPaths } from './scrub.js';

export const EVIDENCE_SCHEMA_FILE = new URL('../../docs/schema/kernelseek.evidence-1.schema.json', import.meta.url);

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
ajv.addFormat('date-time', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
const validateEvidenceJson = ajv.compile(JSON.parse(readFileSync(EVIDENCE_SCHEMA_FILE, 'utf8')) as object);

/** Problems of `value` against the published schema (empty: valid). */
export function evidenceProblems(value: unknown): string[] {
  if (validateEvidenceJson(value)) return [];
  return (validateEvidenceJson.errors ?? []).map((e) => `${e.instancePath || '(top level)'}: ${e.message ?? e.keyword}`);
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : v === null || v === undefined ? null : typeof v === 'object' ? null : String(v));
const interval = (v: unknown): Interval => (Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === 'number' && Number.isFinite(x)) ? [v[0] as number, v[1] as number] : null);
const verdict = (v: unknown): Verdict => (v === 'faster' || v === 'slower' || v === 'same' ? v : null);
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** A ratio the harness did not write, from its times (a figure's value only; no interval). */
function ratio(num: number | null | undefined, den: number | null | undefined): number | null {
  return typeof num === 'number' && typeof den === 'number' && num > 0 && den > 0 ? num / den : null;
}

function scenarioEvidence(s: ScenarioResult, peers: string[]): ScenarioEvidence {
  const raw = s as Record<string, unknown>;
  const peerMs: Record<string, number | null> = {};
  const vsPeer: Record<string, Figure> = {};
  const speedupVsPeer = (raw.speedup_vs_peer ?? {}) as Record<string, unknown>;
  for (const name of [...new Set([...peers, ...Object.keys(s.peer_ms ?? {})])]) {
    const t = num(s.peer_ms?.[name]);
    peerMs[name] = t;
    vsPeer[name] = { value: num(speedupVsPeer[name]) ?? ratio(t, s.time_ms), ci: interval(s.speedup_vs_peer_ci?.[name]), verdict: verdict(s.verdict_vs_peer?.[name]) };
  }
  return {
    id: s.id,
    params: s.params,
    status: typeof s.status === 'string' ? s.status : s.correct ? 'ok' : 'incorrect',
    correct: s.correct,
    reason: s.reason ? scrubPaths(s.reason) : null,
    max_abs_err: num(s.max_abs_err),
    tolerance: num(s.tolerance),
    seeds: Array.isArray(raw.seeds) ? raw.seeds.length : null,
    time_ms: num(s.time_ms),
    baseline_ms: num(s.baseline_ms),
    peer_ms: peerMs,
    vs_baseline: { value: num(raw.speedup_vs_baseline) ?? ratio(s.baseline_ms, s.time_ms), ci: interval(s.speedup_vs_baseline_ci), verdict: verdict(s.verdict_vs_baseline) },
    vs_peer: vsPeer,
  };
}

/** The environment the result was measured in, as the result records it; what it does not record is named. */
function environmentOf(r: EvalResult): Evidence['environment'] {
  const raw = r as Record<string, unknown>;
  const info = (raw.device_info ?? {}) as Record<string, unknown>;
  const compileLog = typeof r.compile.log === 'string' ? r.compile.log : '';
  const firstCommand = compileLog.split('\n').find((l) => l.startsWith('$ '));
  const clock = info.timing_clock as Record<string, unknown> | string | undefined;
  const env: Evidence['environment'] = {
    device: r.device,
    gpu: str(r.gpu) ?? (r.device === 'cuda' ? str(info.name) : null),
    arch: str(r.arch) ?? str(info.arch),
    driver: str(info.driver),
    cuda: str(info.cuda),
    torch: str(info.torch),
    cpu: r.device === 'cpu' ? [str(info.name), num(info.cores) !== null ? `${num(info.cores)} cores` : null].filter(Boolean).join(', ') || null : str(info.cpu),
    harness_version: str(raw.harness_version),
    harness_commit: str(raw.harness_commit),
    compiler: firstCommand ? scrubPaths(firstCommand.slice(2)).slice(0, 400) : null,
    compiler_version: str((r.compile as Record<string, unknown>).compiler_version) ?? str(raw.compiler_version),
    timing_clock: typeof clock === 'string' ? clock : clock && typeof clock === 'object' ? (clock.cupti ? 'cupti' : str(clock.events) ? 'events' : Object.keys(clock)[0] ?? null) : null,
    not_recorded: [],
  };
  const expected: (keyof Evidence['environment'])[] = r.device === 'cuda' ? ['gpu', 'arch', 'driver', 'cuda', 'torch', 'harness_version', 'harness_commit', 'compiler', 'compiler_version'] : ['cpu', 'torch', 'harness_version', 'harness_commit', 'compiler', 'compiler_version'];
  env.not_recorded = expected.filter((k) => env[k] === null);
  return env;
}

export interface EvidenceInput {
  chosen: ChosenEvaluation;
  /** The task as loaded from the trusted folder (null when it is gone: figures come from the result alone). */
  task: LoadedTask | null;
  taskDigest: { digest: string; files: string[] } | null;
  candidate: KernelFile[];
  baseline: KernelFile[];
  diff: KernelDiff;
  link: string | null;
  version: string;
  now: Date;
}

/** The evidence of one chosen evaluation, checked against the published schema before it is returned. */
export function buildEvidence(input: EvidenceInput): Evidence {
  const { chosen, task } = input;
  const { run, evaluation: e, result: r } = chosen;
  const peers = task?.task.peers.map((p) => p.name) ?? Object.keys(r.summary.speedup_vs_peer_geomean);
  const s = r.summary as EvalResult['summary'] & Record<string, unknown>;
  const peerScenarios = (s.peer_scenarios ?? {}) as Record<string, unknown>;
  const vsPeer: Evidence['summary']['vs_peer'] = {};
  for (const name of [...new Set([...peers, ...Object.keys(s.speedup_vs_peer_geomean)])]) {
    vsPeer[name] = { value: num(s.speedup_vs_peer_geomean[name]), ci: interval(s.speedup_vs_peer_ci?.[name]), verdict: verdict(s.verdict_vs_peer?.[name]), scenarios: num(peerScenarios[name]) };
  }
  const goal = s.goal as { vs?: unknown; target?: unknown; value?: unknown; met?: unknown } | null | undefined;
  const seeds = r.scenarios.map((sc) => (Array.isArray((sc as Record<string, unknown>).seeds) ? ((sc as Record<string, unknown>).seeds as unknown[]).length : null)).filter((n): n is number => n !== null);
  const tolerance = task?.task.tolerance;
  const confirmation = (run.state as { confirmation?: { status: string; correct: boolean; speedupVsBaseline: number | null; scenarios: number; reason?: string | null } }).confirmation;
  const evidence: Evidence = {
    schema: EVIDENCE_SCHEMA,
    generated_at: input.now.toISOString(),
    generator: { name: 'kernelseek', version: input.version },
    verified: chosen.standing === 'verified',
    standing: chosen.standing,
    standing_reason: scrubPaths(chosen.reason),
    scenario_set: chosen.scenarioSet,
    chosen_as: chosen.chosenAs,
    run: {
      id: run.id,
      task: run.task,
      status: run.status,
      end_reason: run.endReason,
      origin: run.origin,
      owner: run.owner,
      model: run.model,
      target: run.target,
      created_at: run.createdAt.toISOString(),
      finished_at: iso(run.finishedAt),
      evaluations: run.evalsUsed,
      link: input.link,
      slack: run.slackChannel && run.slackThreadTs ? { channel: run.slackChannel, thread_ts: run.slackThreadTs } : null,
      full_set_check: confirmation
        ? { status: confirmation.status, correct: confirmation.correct, speedup_vs_baseline: num(confirmation.speedupVsBaseline), scenarios: confirmation.scenarios, reason: confirmation.reason ? scrubPaths(confirmation.reason) : null }
        : null,
    },
    evaluation: {
      id: e.id,
      seq: e.seq,
      job_id: e.jobId,
      status: e.status,
      correct: e.correct,
      scenarios_requested: e.scenarios,
      finished_at: iso(e.finishedAt),
      worker: e.worker,
      harness_seconds: num(e.harnessSeconds),
      candidate_sha256: sha256(e.source),
    },
    task: {
      name: r.task,
      summary: task?.task.summary ?? null,
      device: r.device,
      language: task?.task.kernel.language ?? null,
      kernel_file: task?.task.kernel.file ?? null,
      entry: task?.task.kernel.entry ?? null,
      digest: input.taskDigest?.digest ?? null,
      digest_of: input.taskDigest?.files ?? [],
      goal: task ? { vs: task.task.goal.vs, speedup: task.task.goal.speedup } : null,
      peers,
      scenarios_total: chosen.scenarioSet.total,
    },
    environment: environmentOf(r),
    correctness: {
      rule: tolerance?.rule ?? null,
      factor: tolerance?.factor ?? null,
      atol: tolerance?.atol ?? null,
      seeds_per_scenario: seeds.length > 0 ? Math.min(...seeds) : null,
      description: tolerance
        ? `On every scenario, for ${seeds.length > 0 ? `${Math.min(...seeds)} or more random seeds` : 'several random seeds'} with the outputs poisoned (NaN) before each call: max |candidate - reference| <= ${tolerance.factor} x (the error of the task's low-precision result against the higher-precision reference) + ${tolerance.atol}; NaN or Inf never passes. Outputs are checked again after timing.`
        : 'The harness\'s tolerance rule (the task could not be read to name it): the candidate\'s error against a higher-precision reference within a multiple of the low-precision error.',
    },
    summary: {
      scenarios: r.summary.scenarios,
      correct: r.summary.correct,
      vs_baseline: { value: num(s.speedup_vs_baseline_geomean), ci: interval(s.speedup_vs_baseline_ci), verdict: verdict(s.verdict_vs_baseline) },
      vs_peer: vsPeer,
      best_peer: s.best_peer,
      goal: goal && typeof goal.vs === 'string' && typeof goal.target === 'number' ? { vs: goal.vs, target: goal.target, value: num(goal.value), met: goal.met === true } : null,
      pct_of_peak_median: num(s.pct_of_peak_median),
      flags: Array.isArray(r.flags) ? (r.flags as unknown[]).map(String) : [],
    },
    scenarios: r.scenarios.map((sc) => scenarioEvidence(sc, peers)),
    kernel: { files: input.candidate.map((f) => ({ path: f.path, sha256: sha256(f.content), bytes: Buffer.byteLength(f.content) })) },
    diff: { against: 'baseline', baseline_files: input.baseline.map((f) => ({ path: f.path, sha256: sha256(f.content) })), files_changed: input.diff.filesChanged, insertions: input.diff.insertions, deletions: input.diff.deletions },
    notes: r.messages.map(scrubPaths),
  };
  const problems = evidenceProblems(evidence);
  // A bug of ours, not the person's input: nothing invalid is ever written or sent.
  if (problems.length > 0) throw new Error(`the evidence does not match ${EVIDENCE_SCHEMA}: ${problems.slice(0, 5).join('; ')}`);
  return evidence;
}
