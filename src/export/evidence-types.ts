import type { Standing } from './choose.js';

/**
 * The evidence a result goes out with, schema `kernelseek.evidence/1`, published as
 * docs/schema/kernelseek.evidence-1.schema.json (every file written is checked against it). Fields
 * may be added; none may change meaning. Figures are the harness's own (`kernelseek.eval/1`), never
 * recomputed here except a ratio the harness did not write (then `source: "times"`).
 */
export const EVIDENCE_SCHEMA = 'kernelseek.evidence/1';

export type Interval = [number, number] | null;
export type Verdict = 'faster' | 'slower' | 'same' | null;

/** A speedup with its 95 % interval and the harness's verdict (null where it gave none). */
export interface Figure {
  value: number | null;
  ci: Interval;
  verdict: Verdict;
}

export interface ScenarioEvidence {
  id: string;
  params: Record<string, unknown>;
  status: string;
  correct: boolean;
  reason: string | null;
  max_abs_err: number | null;
  tolerance: number | null;
  /** Correctness seeds this scenario was checked with. */
  seeds: number | null;
  time_ms: number | null;
  baseline_ms: number | null;
  peer_ms: Record<string, number | null>;
  vs_baseline: Figure;
  vs_peer: Record<string, Figure>;
}

export interface Evidence {
  schema: typeof EVIDENCE_SCHEMA;
  generated_at: string;
  generator: { name: 'kernelseek'; version: string };
  /** Counted: the full set, correct everywhere, status ok, nothing flagged. The only results `pr` takes. */
  verified: boolean;
  standing: Standing;
  standing_reason: string;
  scenario_set: { name: string; full: boolean; evaluated: number; total: number | null };
  /** How the evaluation was chosen: `best`, `best, on the full set`, `eval N`. */
  chosen_as: string;
  run: {
    id: string;
    task: string;
    status: string;
    end_reason: string | null;
    origin: string;
    owner: string;
    model: string;
    target: number;
    created_at: string;
    finished_at: string | null;
    evaluations: number;
    /** Where people can open the run (its Slack thread), when it can be resolved. */
    link: string | null;
    slack: { channel: string; thread_ts: string } | null;
    /** A quick run's best, evaluated on every scenario at the run's end (figures only: no per-scenario record). */
    full_set_check: { status: string; correct: boolean; speedup_vs_baseline: number | null; scenarios: number; reason: string | null } | null;
  };
  evaluation: {
    id: number;
    seq: number | null;
    job_id: string | null;
    status: string;
    correct: boolean | null;
    scenarios_requested: string;
    finished_at: string | null;
    worker: string | null;
    harness_seconds: number | null;
    candidate_sha256: string;
  };
  task: {
    name: string;
    summary: string | null;
    device: string;
    language: string | null;
    kernel_file: string | null;
    entry: string | null;
    /** sha256 over task.yaml, reference.py and the baseline as found when the evidence was written. */
    digest: string | null;
    digest_of: string[];
    goal: { vs: string; speedup: number } | null;
    peers: string[];
    scenarios_total: number | null;
  };
  environment: {
    device: string;
    gpu: string | null;
    arch: string | null;
    driver: string | null;
    cuda: string | null;
    torch: string | null;
    cpu: string | null;
    harness_version: string | null;
    harness_commit: string | null;
    /** The compile command the harness ran (absolute paths cut to their last part). */
    compiler: string | null;
    compiler_version: string | null;
    timing_clock: string | null;
    /** Fields above that this result does not record (an older harness, or a CPU task). */
    not_recorded: string[];
  };
  correctness: { rule: string | null; factor: number | null; atol: number | null; seeds_per_scenario: number | null; description: string };
  summary: {
    scenarios: number;
    correct: number;
    vs_baseline: Figure;
    vs_peer: Record<string, Figure & { scenarios: number | null }>;
    best_peer: string | null;
    goal: { vs: string; target: number; value: number | null; met: boolean } | null;
    pct_of_peak_median: number | null;
    flags: string[];
  };
  scenarios: ScenarioEvidence[];
  kernel: { files: { path: string; sha256: string; bytes: number }[] };
  diff: { against: 'baseline'; baseline_files: { path: string; sha256: string }[]; files_changed: number; insertions: number; deletions: number };
  /** The harness's messages about this result (absolute paths cut). */
  notes: string[];
}
