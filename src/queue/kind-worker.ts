import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { RedisOptions } from 'ioredis';
import type { AppError} from '../core/errors.js';
import { NonRetryableError, UserInputError } from '../core/errors.js';
import { JOB_KINDS, queueNameFor, type JobKind, type PayloadOf } from './catalog.js';
import { describeIssues } from './payloads.js';

/** What a processor gets besides its validated payload. */
export interface ProcessorContext {
  job: Job;
  /** The worker's lock token for this job (needed to hand the job back to the queue). */
  token: string | undefined;
  /** Fires when the worker shuts down past its grace period or the kind's time limit is reached. */
  signal: AbortSignal;
  /** Fires only for the shutdown: the processor should hand the job back rather than fail it. */
  shutdownSignal: AbortSignal | undefined;
}

/** Processes one job of a kind: throw to fail (retried per the catalog), return the job's result. */
export type KindProcessor<K extends JobKind, R = unknown> = (payload: PayloadOf<K>, ctx: ProcessorContext) => Promise<R>;

export interface KindWorkerOptions {
  connection: RedisOptions;
  prefix: string;
  /** For per-architecture kinds: which queue (`cpu`, `sm_90`). */
  arch?: string;
  /** For per-architecture kinds: the harness version's queue (src/queue/harness-version.ts). */
  harnessId?: string;
  concurrency?: number;
  /** Lock lifetime; renewed every half of it while the job runs. */
  lockSeconds: number;
  /** How often this worker looks for jobs whose lock expired. */
  stalledCheckSeconds: number;
  /** Times a job may be recovered after its worker died before it counts as failed. */
  maxStalledCount?: number;
  /** Shows up in `CLIENT LIST` and `Queue.getWorkers()`. */
  name?: string;
}

/**
 * A BullMQ worker for one job kind: the payload is checked against the catalog's schema first (a
 * malformed payload fails at once with the schema's words, no retries), errors that retrying cannot
 * fix become UnrecoverableError, and the kind's time limit is enforced.
 *
 * This is the seam other modules plug their processors into (the agent's `agent-turn`, the
 * digest's `digest`); the GPU worker plugs in `evaluate` and `gpu-bash`.
 */
export function createKindWorker<K extends JobKind>(kind: K, processor: KindProcessor<K>, options: KindWorkerOptions): Worker {
  const spec = JOB_KINDS[kind];
  const queue = queueNameFor(kind, options.arch, options.harnessId);
  return new Worker(
    queue,
    async (job: Job, token?: string, workerSignal?: AbortSignal) => {
      const parsed = spec.payload.safeParse(job.data);
      if (!parsed.success) {
        throw new UnrecoverableError(`invalid ${kind} payload: ${describeIssues(parsed.error)}`);
      }
      const limit = AbortSignal.timeout(spec.timeoutSeconds * 1000);
      const signal = workerSignal ? AbortSignal.any([workerSignal, limit]) : limit;
      try {
        return await processor(parsed.data as PayloadOf<K>, { job, token, signal, shutdownSignal: workerSignal });
      } catch (error) {
        if (error instanceof UserInputError || error instanceof NonRetryableError) {
          throw new UnrecoverableError((error as AppError).userMessage);
        }
        throw error;
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency ?? 1,
      lockDuration: options.lockSeconds * 1000,
      stalledInterval: options.stalledCheckSeconds * 1000,
      maxStalledCount: options.maxStalledCount ?? 2,
      ...(options.name ? { name: options.name } : {}),
    },
  );
}
