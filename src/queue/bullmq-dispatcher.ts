import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Job } from 'bullmq';
import type { RedisOptions } from 'ioredis';
import { AppError, HarnessError, UserInputError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type {
  DispatchOptions,
  Dispatcher,
  EvaluationOutcome,
  EvaluationProgress,
  EvaluationRequest,
  GpuBashRequest,
  GpuBashResult,
} from './dispatcher.js';
import { JOB_KINDS, queueNameFor, type PayloadOf } from './catalog.js';
import { describeIssues, type EvaluatePayload, type GpuBashPayload } from './payloads.js';
import { toEvaluatePayload, toGpuBashPayload } from './request-payloads.js';
import { createQueueClient, type QueueClient } from './producer.js';
import { REPO_ROOT } from '../config/index.js';
import { computeHarnessVersion, type HarnessVersion } from './harness-version.js';
import type { ResultKey } from './result-key.js';
import { packTask } from './task-bundle.js';
import { openSeal, payloadDigest, type Opened, type SealedKind } from './result-seal.js';

export interface BullmqDispatcherOptions {
  connection: RedisOptions;
  prefix: string;
  /** The key the workers seal results with (loadResultKey): a result without its seal is refused. */
  resultKey: ResultKey;
  /** Stop waiting for a result after this long (e.g. no worker for the architecture); unset: wait. */
  waitTimeoutSeconds?: number;
  /** Refused results are logged here as well as reported to the caller's onProgress. */
  logger?: Logger;
  /**
   * The harness version jobs are sent for: they go to that version's queues, which only workers
   * of the same version listen on. Default: this checkout's (`repoRoot`).
   */
  harness?: HarnessVersion;
  /** The trusted checkout whose harness version is used by default (config.core.repoRoot). */
  repoRoot?: string;
  /** Where task folders are packed from into each evaluation (config.core.tasksDir). */
  tasksDir?: string;
}

/**
 * Refused results for one request before the dispatcher gives up with an error. Each refusal sends
 * the work to be done again, so whoever keeps answering jobs without the key costs evaluations and
 * in the end fails the request; a forged figure is never taken.
 */
export const MAX_REFUSED_RESULTS = 3;
/**
 * Results sealed under another key before giving up: the first may be planted, the second comes
 * from a worker that ran the job, so a deployment whose keys differ stops there instead of running
 * every evaluation a third time.
 */
export const MAX_KEY_MISMATCHES = 2;

// Shared with the in-process dispatcher, which must not load BullMQ to validate a request.
export { toEvaluatePayload, toGpuBashPayload } from './request-payloads.js';

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
    await Promise.race([removal, delay(2000, undefined, { ref: false })]);
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

/** The accepted result, with the refusals that came before it said on it (and, for an evaluation, in its messages). */
function withRefusals<T>(kind: SealedKind, value: T, refused: string[]): T {
  if (refused.length === 0) return value;
  if (kind === 'gpu-bash') return { ...value, refused } as T;
  const outcome = value as EvaluationOutcome;
  if (outcome.status === 'harness_error') return { ...outcome, refused } as T;
  const note = `KernelSeek refused ${refused.length} result${refused.length === 1 ? '' : 's'} offered for job ${outcome.jobId} before this one, which a worker sealed after running the harness: ${refused.join(' | ')}`;
  return { ...outcome, refused, result: { ...outcome.result, messages: [...outcome.result.messages, note] } } as T;
}

/**
 * The dispatcher `serve` and `kernelseek eval --remote` use: jobs go to Redis under deterministic
 * ids and GPU workers return the results, sealed (src/queue/result-seal.ts). Calling `evaluate`
 * twice with the same run and sequence number (or, ad hoc, the same content) runs the evaluation
 * once and returns its result twice. A result whose seal is missing, wrong, or binds other work is
 * refused: the job is removed (once no worker holds it) and the work enqueued again under its id.
 */
export interface BullmqDispatcher extends Dispatcher {
  client: QueueClient;
  /** The harness version this dispatcher sends jobs for. */
  harness(): Promise<HarnessVersion>;
  /** The payload an evaluation request is sent as (its task packed in): what a worker receives. */
  payloadFor(request: EvaluationRequest): Promise<EvaluatePayload>;
}

export function createBullmqDispatcher(options: BullmqDispatcherOptions): BullmqDispatcher {
  const client = createQueueClient({ connection: options.connection, prefix: options.prefix });
  const ttl = options.waitTimeoutSeconds ? options.waitTimeoutSeconds * 1000 : undefined;
  const key = options.resultKey;
  const repoRoot = options.repoRoot ?? REPO_ROOT;
  const tasksDir = options.tasksDir ?? path.join(repoRoot, 'kernels');
  const harness = () => (options.harness ? Promise.resolve(options.harness) : computeHarnessVersion(repoRoot));

  /** The evaluation with its task folder packed in, so a worker without a copy of it evaluates it. */
  const withTask = async (payload: EvaluatePayload): Promise<EvaluatePayload> => {
    if (payload.taskBundle || !/^[a-z0-9_]+$/.test(payload.task)) return payload;
    try {
      return { ...payload, taskBundle: await packTask(path.join(tasksDir, payload.task), payload.task, key) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new UserInputError(`Task '${payload.task}' is not in ${tasksDir} (KERNELSEEK_TASKS_DIR): the task travels to the workers from this checkout.`, { code: 'task_unknown' });
      }
      throw error;
    }
  };

  const submit = async <T>(kind: SealedKind, request: EvaluatePayload | GpuBashPayload, dispatch: DispatchOptions): Promise<T> => {
    const payload = kind === 'evaluate' ? await withTask(request as EvaluatePayload) : request;
    const parsed = JOB_KINDS[kind].payload.safeParse(payload);
    if (!parsed.success) throw new UserInputError(`Invalid ${kind} job: ${describeIssues(parsed.error)}`, { code: 'job_invalid' });
    const data = parsed.data as PayloadOf<typeof kind>;
    // The digest of what this dispatcher sends: a seal is checked against it, never against the
    // job's data as Redis holds it (whoever planted the job wrote that).
    const digest = payloadDigest(kind, data);
    const { id: harnessId } = await harness();
    const queueName = queueNameFor(kind, data.arch, harnessId);
    const open = (jobId: string, value: unknown) => openSeal<T>(key, { kind, jobId, payloadDigest: digest }, value);
    // Listen before adding, so that the events of a job that starts at once are not missed.
    await client.events(queueName);
    const refused: string[] = [];
    let keyMismatches = 0;

    /**
     * After a refusal: frees the job id for the work to be done again, unless the job is our own
     * work running on a worker (then its own result is awaited). Says which, for the message, and
     * returns a genuine result that landed meanwhile.
     */
    const makeRoom = async (job: Job): Promise<{ next: string; late?: Opened<T> }> => {
      const again = { next: 'The work is queued again, to be done for real.' };
      const current = await client.queue(queueName).getJob(String(job.id));
      if (!current) return again;
      const state = await current.getState();
      if (state === 'active') {
        // What was refused came from elsewhere (e.g. a forged completion event) while a worker holds
        // the job: our own work, so wait for that worker's result. Other work cannot be removed
        // while locked: let it end first.
        if (payloadDigest(kind, current.data) === digest) return { next: 'A worker is running this job: its own result is awaited.' };
        await awaitJob<unknown>(client, current, queueName, { signal: dispatch.signal }, ttl).catch((error: unknown) => {
          if (dispatch.signal?.aborted) throw error;
        });
      }
      if (state === 'completed') {
        const late = open(String(current.id), current.returnvalue);
        if (late.ok) return { next: "The job's own sealed result has arrived since, and is taken.", late };
      }
      // A worker may have taken it since: then the next round finds it and judges it again.
      await current.remove().catch(() => undefined);
      return again;
    };

    for (;;) {
      const { job, created } = await client.enqueue(kind, data, { harnessId });
      const jobId = String(job.id);
      announce(dispatch, job, queueName, created);
      const opened: Opened<T> =
        !created && payloadDigest(kind, job.data) !== digest
          ? // Found under our id but not our work: planted, or left by a different request.
            { ok: false, keyMismatch: false, reason: 'the job already under this id carries other work (another candidate source, task, scenarios, options or run), so this dispatcher did not enqueue it' }
          : open(jobId, await awaitJob<unknown>(client, job, queueName, dispatch, ttl));
      if (opened.ok) return withRefusals(kind, opened.value, refused);
      options.logger?.warn({ jobId, queue: queueName, reason: opened.reason }, 'result refused');
      if (opened.keyMismatch) keyMismatches++;
      if (refused.length + 1 >= MAX_REFUSED_RESULTS || keyMismatches >= MAX_KEY_MISMATCHES) {
        const message = `The result of job ${jobId} on ${queueName} was refused: ${opened.reason}.`;
        dispatch.onProgress?.({ phase: 'refused', message });
        const fix = opened.keyMismatch
          ? `Give serve, kernelseek eval --remote and every gpu-worker the same KERNELSEEK_RESULT_KEY (this dispatcher's key is ${key.id}, from ${key.source}).`
          : 'Something that can write to this Redis answers jobs without the result key (a rogue worker, or tampered job records): check who holds the Redis password.';
        throw new HarnessError(`No result taken for job ${jobId} on ${queueName}: ${refused.length + 1} results were refused, the last because ${opened.reason}. ${fix}`, { code: 'result_refused' });
      }
      const { next, late } = await makeRoom(job);
      const message = `The result of job ${jobId} on ${queueName} was refused: ${opened.reason}. ${next}`;
      refused.push(message);
      dispatch.onProgress?.({ phase: 'refused', message });
      if (late?.ok) return withRefusals(kind, late.value, refused);
    }
  };
  return {
    client,
    harness,
    payloadFor: async (request: EvaluationRequest) => withTask(toEvaluatePayload(request)),
    evaluate: (request: EvaluationRequest, dispatch: DispatchOptions = {}) => submit<EvaluationOutcome>('evaluate', toEvaluatePayload(request), dispatch),
    gpuBash: (request: GpuBashRequest, dispatch: DispatchOptions = {}) => submit<GpuBashResult>('gpu-bash', toGpuBashPayload(request), dispatch),
    close: () => client.close(),
  };
}
