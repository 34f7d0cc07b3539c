import { createHash } from 'node:crypto';
import type { z } from 'zod';
import {
  AgentTurnPayloadSchema,
  DigestPayloadSchema,
  EvaluatePayloadSchema,
  GpuBashPayloadSchema,
  type AgentTurnPayload,
  type DigestPayload,
  type EvaluatePayload,
  type GpuBashPayload,
} from './payloads.js';

/**
 * Every kind of job the product runs, in one place: which queue it goes to, what its payload is,
 * how often it is tried, how it backs off and how long one attempt may take. Job ids are
 * deterministic, so a retry or a duplicate enqueue finds the existing job instead of running the
 * work again (BullMQ ignores an add whose id exists).
 *
 * Ids have the form `<kind>:<a>:<b>`: BullMQ refuses custom ids with colons unless there are
 * exactly three parts, and our parts never contain one.
 */
interface JobKindSpec<S extends z.ZodType> {
  /** The queue; per-architecture kinds get one queue per arch (`eval-sm_90`, `eval-cpu`). */
  queue: (arch: string) => string;
  perArch: boolean;
  payload: S;
  jobId: (payload: z.output<S>) => string;
  attempts: number;
  backoff: { type: 'exponential' | 'fixed'; delay: number } | undefined;
  /** The longest one attempt may run; the processor enforces it (BullMQ does not). */
  timeoutSeconds: number;
  /** How long finished jobs stay in Redis: the window in which a duplicate returns the first result. */
  keepCompletedSeconds: number;
}

function contentHash(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
}

export const JOB_KINDS = {
  evaluate: {
    queue: (arch: string) => `eval-${arch}`,
    perArch: true,
    payload: EvaluatePayloadSchema,
    // Within a run the evaluation number identifies the work; an ad-hoc evaluation (`kernelseek eval
    // --remote`) is identified by everything that determines its result.
    jobId: (p: EvaluatePayload) =>
      p.runId !== undefined && p.seq !== undefined
        ? `eval:${p.runId}:${p.seq}`
        : `eval:adhoc:${contentHash([p.task, p.fileName, p.source ?? null, p.files ?? null, p.scenarios, p.arch, p.device ?? null, p.options ?? null, p.taskBundle?.digest ?? null])}`,
    // A second attempt only for failures of the machinery (the worker lost Redis, a disk filled up);
    // a candidate's failure or a harness crash is a result, not an exception.
    attempts: 2,
    backoff: { type: 'exponential', delay: 5_000 },
    timeoutSeconds: 1800,
    keepCompletedSeconds: 24 * 3600,
  },
  'gpu-bash': {
    queue: (arch: string) => `gpu-bash-${arch}`,
    perArch: true,
    payload: GpuBashPayloadSchema,
    jobId: (p: GpuBashPayload) => `bash:${p.runId}:${p.seq}`,
    attempts: 2,
    backoff: { type: 'fixed', delay: 2_000 },
    timeoutSeconds: 600,
    keepCompletedSeconds: 24 * 3600,
  },
  'agent-turn': {
    queue: () => 'agent-turn',
    perArch: false,
    payload: AgentTurnPayloadSchema,
    jobId: (p: AgentTurnPayload) => `turn:${p.runId}:${p.turn}`,
    attempts: 3,
    backoff: { type: 'exponential', delay: 2_000 },
    // A turn can wait on an evaluation (up to the evaluate job's 1800 s) plus its model steps: a turn
    // aborted by its own limit in the middle of a long CUDA evaluation would only repeat the wait.
    timeoutSeconds: 2400,
    keepCompletedSeconds: 7 * 24 * 3600,
  },
  digest: {
    queue: () => 'digest',
    perArch: false,
    payload: DigestPayloadSchema,
    // Digest jobs come from one job scheduler per channel (src/digest/scheduler.ts): this is the
    // scheduler's id, the same in every replica, and BullMQ names its jobs `repeat:<id>:<time>`.
    // No colon in it, for that reason.
    jobId: (p: DigestPayload) => `digest-${p.channel}`,
    // Slack outages are usually short; the store's claim makes a retry safe.
    attempts: 3,
    backoff: { type: 'exponential', delay: 60_000 },
    timeoutSeconds: 300,
    keepCompletedSeconds: 7 * 24 * 3600,
  },
} as const satisfies {
  evaluate: JobKindSpec<typeof EvaluatePayloadSchema>;
  'gpu-bash': JobKindSpec<typeof GpuBashPayloadSchema>;
  'agent-turn': JobKindSpec<typeof AgentTurnPayloadSchema>;
  digest: JobKindSpec<typeof DigestPayloadSchema>;
};

export type JobKind = keyof typeof JOB_KINDS;
export type PayloadOf<K extends JobKind> = z.output<(typeof JOB_KINDS)[K]['payload']>;

export const JOB_KIND_NAMES = Object.keys(JOB_KINDS) as JobKind[];

/**
 * The queue a job of this kind goes to. Per-arch kinds need the arch (`cpu` or `sm_90`) and go to
 * a queue per harness version too (`eval-sm_90@3f2a9c01b7de`, the id of src/queue/harness-version.ts):
 * a worker listens only on its own version's queues, so Redis hands a job only to a worker whose
 * harness matches the server's (docs/queue.md, "Workers that match their server"). Without the
 * harness id, the arch's name alone: how heartbeats of older workers and the run's waiting note
 * name the pool.
 */
export function queueNameFor(kind: JobKind, arch?: string, harnessId?: string): string {
  const spec = JOB_KINDS[kind];
  if (spec.perArch && !arch) throw new Error(`${kind} jobs go to a queue per architecture: give the arch (cpu, sm_90, ...)`);
  const base = spec.queue(arch ?? '');
  return spec.perArch && harnessId ? `${base}@${harnessId}` : base;
}

/** The pool part of a per-version queue name (`eval-cpu` of `eval-cpu@3f2a9c01b7de`) and its harness id. */
export function splitQueueName(name: string): { base: string; harnessId: string | null } {
  const at = name.indexOf('@');
  return at < 0 ? { base: name, harnessId: null } : { base: name.slice(0, at), harnessId: name.slice(at + 1) };
}

export function jobIdFor<K extends JobKind>(kind: K, payload: PayloadOf<K>): string {
  return (JOB_KINDS[kind].jobId as (p: PayloadOf<K>) => string)(payload);
}

/** Attempts, backoff and retention of a kind's jobs (a job scheduler's template takes these). */
export function kindOptionsFor(kind: JobKind) {
  const spec = JOB_KINDS[kind];
  return {
    attempts: spec.attempts,
    ...(spec.backoff ? { backoff: spec.backoff } : {}),
    removeOnComplete: { age: spec.keepCompletedSeconds },
    removeOnFail: { age: 7 * 24 * 3600 },
  };
}

/** BullMQ options for adding a job of this kind. */
export function jobOptionsFor<K extends JobKind>(kind: K, payload: PayloadOf<K>) {
  return { jobId: jobIdFor(kind, payload), ...kindOptionsFor(kind) };
}
