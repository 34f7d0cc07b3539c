import type { CandidateFiles } from '../harness/candidate.js';
import type { EvaluationOptions, EvaluationOutcome, EvaluationProgress } from '../harness/evaluation.js';

// The evaluation's own types belong to the harness (the runner produces them); re-exported here for
// the dispatchers' callers.
export type { EvaluationOptions, EvaluationOutcome, EvaluationProgress, ExecutorInfo } from '../harness/evaluation.js';

/**
 * How the agent (and `kernelseek eval`) gets work done on GPU hosts. Two implementations: BullMQ over
 * Redis for `serve` and `--remote`, and an in-process one for `kernelseek run`/`eval` (no Redis).
 */

/** One candidate to evaluate. The task folder comes from the executor's trusted checkout, by name. */
export interface EvaluationRequest {
  task: string;
  /** A one-file candidate's source. */
  source?: string;
  /** A folder candidate's files, {path inside the folder: text}, instead of `source` (harness/candidate.ts). */
  files?: CandidateFiles;
  /** The name the task expects (task.yaml kernel.file), e.g. `kernel.cu`, or a folder `kernel/`. */
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
  /** The run's best kernel so far (its source), timed beside the candidate: a new best is decided on it. */
  incumbent?: string;
  /** The same, for a folder kernel. */
  incumbentFiles?: CandidateFiles;
  /** Harness knobs; unset means the harness's defaults (and the queue's time limit). */
  options?: EvaluationOptions;
}

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
  /** Results offered through the queue and refused before this one (unsealed, forged, other work). */
  refused?: string[];
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
