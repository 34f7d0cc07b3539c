import type { EvalOutcome } from '../harness/result.js';

/**
 * How the agent (and `kernelseek eval`) gets work done on GPU hosts. Two implementations: BullMQ over
 * Redis for `serve` and `--remote`, and an in-process one for `kernelseek run`/`eval` (no Redis).
 */

/** One candidate to evaluate. The task folder comes from the executor's trusted checkout, by name. */
export interface EvaluationRequest {
  task: string;
  /** The candidate's source: exactly one file. */
  source: string;
  /** The file name the task expects (task.yaml kernel.file), e.g. `kernel.cu`. */
  fileName: string;
  /** `all`, `quick`, or a scenario filter. */
  scenarios: string;
  /** Which pool evaluates it: `cpu` tasks anywhere, cuda tasks on workers of this architecture. */
  arch?: string;
  /** With a run and an evaluation number the job id is deterministic: a retry never runs twice. */
  runId?: string;
  seq?: number;
  /** `cpu` or `cuda`; defaults to the task's device. */
  device?: 'cpu' | 'cuda';
  /** Harness knobs; unset means the harness's defaults (and the queue's time limit). */
  options?: EvaluationOptions;
}

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
  /** A finished scenario's median time. */
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
};

/** A command to run on a GPU host against a snapshot of a run's workspace. */
export interface GpuBashRequest {
  runId: string;
  seq: number;
  command: string;
  /** The workspace as a gzipped tar archive (size-capped by the producer). */
  archive: Buffer;
  timeoutSeconds: number;
  arch?: string;
}

export interface GpuBashResult {
  exitCode: number | null;
  /** stdout and stderr interleaved, head and tail kept when over the cap. */
  output: string;
  truncated: boolean;
  timedOut: boolean;
  durationMs: number;
  worker: string;
  gpu: string | null;
}

export interface DispatchOptions {
  signal?: AbortSignal;
  onProgress?: (progress: EvaluationProgress) => void;
}

export interface Dispatcher {
  evaluate(request: EvaluationRequest, options?: DispatchOptions): Promise<EvaluationOutcome>;
  gpuBash(request: GpuBashRequest, options?: DispatchOptions): Promise<GpuBashResult>;
  close(): Promise<void>;
}
