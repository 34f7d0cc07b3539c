import type { EvalOutcome } from './result.js';

/**
 * The types of one evaluation as the harness runner produces them. They live here, not with the
 * dispatchers in src/queue, because the runner (and its views) use them: the harness is the layer
 * below the queue and never imports from it.
 */

export interface EvaluationOptions {
  /** Correctness seeds per scenario (at least 2). */
  seeds?: number;
  /** Time the task's peers (default true). */
  peers?: boolean;
  /** Time the baseline (default true). */
  baseline?: boolean;
  /** Hard limit for the whole evaluation; capped by the queue's limit. */
  timeoutSeconds?: number;
  /** Seconds without progress before one call of the candidate counts as hung. */
  callTimeoutSeconds?: number;
  /** Only compile and run the source and binary checks (registers, shared memory, spills); no scenario runs. */
  compileOnly?: boolean;
}

/** Who ran an evaluation: recorded with every result so figures can be traced to hardware. */
export interface ExecutorInfo {
  host: string;
  /** The GPU index on the host (CUDA_VISIBLE_DEVICES), null on a CPU slot. */
  gpuIndex: number | null;
  gpuName: string | null;
  driver: string | null;
  harnessVersion: string | null;
  python: string | null;
  torch: string | null;
}

export interface EvaluationProgress {
  phase: string;
  /** Scenario index and count, when the phase is per scenario. */
  i?: number;
  n?: number;
  message?: string;
  /** The scenario id, when the phase is per scenario. */
  scenario?: string;
  /** A finished scenario's (or the whole evaluation's) status, e.g. `ok`, `incorrect`. */
  status?: string;
  /** A finished scenario's time (ms), as the harness made it of its rounds (`timing.figure`). */
  timeMs?: number | null;
}

export type EvaluationOutcome = EvalOutcome & {
  jobId: string;
  /** Host and GPU index that ran it, e.g. `gpu-host-1/0`. */
  worker: string;
  gpu: string | null;
  /** Added: the executing host's GPU, driver and harness version (absent from older producers). */
  executor?: ExecutorInfo;
  /** Added: set when the result was trimmed to the queue's size cap (what was dropped). */
  trimmed?: string;
  /** Added: results offered through the queue and refused before this one (unsealed, forged, other work). */
  refused?: string[];
};
