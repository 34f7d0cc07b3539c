import type { Job } from 'bullmq';
import type { RedisOptions } from 'ioredis';
import { AppError, HarnessError, UserInputError } from '../core/errors.js';
import type {
  DispatchOptions,
  Dispatcher,
  EvaluationOutcome,
  EvaluationProgress,
  EvaluationRequest,
  GpuBashRequest,
  GpuBashResult,
} from './dispatcher.js';
import { queueNameFor, type PayloadOf } from './catalog.js';
import { MAX_ARCHIVE_BYTES, type EvaluatePayload, type GpuBashPayload } from './payloads.js';
import { createQueueClient, type QueueClient } from './producer.js';

export interface BullmqDispatcherOptions {
  connection: RedisOptions;
  prefix: string;
  /** Stop waiting for a result after this long (e.g. no worker for the architecture); unset: wait. */
  waitTimeoutSeconds?: number;
}

/** What the worker receives for an evaluation request. */
export function toEvaluatePayload(request: EvaluationRequest): EvaluatePayload {
  return {
    task: request.task,
    source: request.source,
    fileName: request.fileName,
    scenarios: request.scenarios,
    arch: request.arch ?? 'cpu',
    ...(request.device ? { device: request.device } : {}),
    ...(request.runId !== undefined ? { runId: request.runId } : {}),
    ...(request.seq !== undefined ? { seq: request.seq } : {}),
    ...(request.options ? { options: request.options } : {}),
  };
}

export function toGpuBashPayload(request: GpuBashRequest): GpuBashPayload {
  if (request.archive.length > MAX_ARCHIVE_BYTES) {
    throw new UserInputError(
      `The workspace snapshot is ${(request.archive.length / 2 ** 20).toFixed(1)} MiB; gpu_bash takes at most ${MAX_ARCHIVE_BYTES >> 20} MiB. Remove large files from the workspace and try again.`,
      { code: 'archive_too_large' },
    );
  }
  return {
    runId: request.runId,
    seq: request.seq,
    command: request.command,
    archive: request.archive.toString('base64'),
    timeoutSeconds: request.timeoutSeconds,
    arch: request.arch ?? 'cpu',
  };
}

/**
 * Waits for a job's result. A duplicate enqueue lands here too and gets the first job's result. On
 * abort, a job that has not started is removed; a running one is left to finish (its result stays
 * in Redis for a later duplicate).
 */
async function awaitJob<T>(client: QueueClient, job: Job, queueName: string, options: DispatchOptions, ttlMs: number | undefined): Promise<T> {
  const { signal } = options;
  // Take a job that has not started out of the queue before giving up on it (bounded: Redis may
  // be the reason we are giving up).
  const giveUp = async (): Promise<never> => {
    const removal = (async () => {
      const state = await job.getState();
      if (state === 'waiting' || state === 'delayed' || state === 'prioritized') await job.remove();
    })().catch(() => undefined);
    await Promise.race([removal, new Promise((r) => setTimeout(r, 2000).unref())]);
    throw signal?.reason ?? new Error('aborted');
  };
  if (signal?.aborted) return giveUp();
  const events = await client.events(queueName);
  const onProgress = ({ jobId, data }: { jobId: string; data: unknown }) => {
    if (jobId === job.id && data && typeof data === 'object') options.onProgress?.(data as EvaluationProgress);
  };
  events.on('progress', onProgress);
  let onAbort: (() => void) | undefined;
  try {
    const finished = job.waitUntilFinished(events, ttlMs) as Promise<T>;
    if (!signal) return await finished;
    // If the abort wins, the wait still settles later: nobody else is listening to it.
    finished.catch(() => undefined);
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => void giveUp().catch(reject);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return await Promise.race([finished, aborted]);
  } catch (error) {
    if (signal?.aborted || error instanceof AppError) throw error;
    throw new HarnessError(`Job ${job.id} on ${queueName} failed: ${(error as Error).message}`, { code: 'job_failed', cause: error });
  } finally {
    events.off('progress', onProgress);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

function announce(dispatch: DispatchOptions, job: Job, queueName: string, created: boolean): void {
  dispatch.onProgress?.({
    phase: 'queued',
    message: created ? `queued as ${job.id} on ${queueName}` : `${job.id} was submitted before: waiting for that job's result`,
  });
}

/**
 * The dispatcher `serve` and `kernelseek eval --remote` use: jobs go to Redis under deterministic
 * ids and GPU workers return the results. Calling `evaluate` twice with the same run and sequence
 * number (or, ad hoc, the same content) runs the evaluation once and returns its result twice.
 */
export function createBullmqDispatcher(options: BullmqDispatcherOptions): Dispatcher & { client: QueueClient } {
  const client = createQueueClient({ connection: options.connection, prefix: options.prefix });
  const ttl = options.waitTimeoutSeconds ? options.waitTimeoutSeconds * 1000 : undefined;
  const submit = async <T>(kind: 'evaluate' | 'gpu-bash', payload: EvaluatePayload | GpuBashPayload, dispatch: DispatchOptions): Promise<T> => {
    // Listen before adding, so that the events of a job that starts at once are not missed.
    await client.events(queueNameFor(kind, payload.arch));
    const { job, queueName, created } = await client.enqueue(kind, payload as PayloadOf<typeof kind>);
    announce(dispatch, job, queueName, created);
    return awaitJob<T>(client, job, queueName, dispatch, ttl);
  };
  return {
    client,
    evaluate: (request: EvaluationRequest, dispatch: DispatchOptions = {}) => submit<EvaluationOutcome>('evaluate', toEvaluatePayload(request), dispatch),
    gpuBash: (request: GpuBashRequest, dispatch: DispatchOptions = {}) => submit<GpuBashResult>('gpu-bash', toGpuBashPayload(request), dispatch),
    close: () => client.close(),
  };
}
