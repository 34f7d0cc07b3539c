import { setTimeout as delay } from 'node:timers/promises';
import { ErrorCode, Queue, UnrecoverableError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { DigestConfig } from '../config/index.js';
import { NonRetryableError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { DigestPayloadSchema, jobIdFor, kindOptionsFor, type DigestPayload } from '../queue/index.js';
import { chartTextRenders } from './charts.js';
import { deliverScheduledDigest, type DeliveryResult, type DigestDeps } from './deliver.js';

/** The BullMQ queue of digest jobs (the queue catalog's `digest` kind). */
export const DIGEST_QUEUE = 'digest';
export const DIGEST_JOB_NAME = 'digest';

/** One scheduler per channel, with an id every replica computes alike: upserting it twice leaves one. */
export function digestSchedulerId(channel: string): string {
  return jobIdFor('digest', { channel });
}

/** The data of a scheduled digest job: the queue catalog's `digest` payload. */
export const ScheduledDigestJobSchema = DigestPayloadSchema;
export type ScheduledDigestJob = DigestPayload;

/** Attempts, backoff and retention of a digest job, from the queue catalog. */
export const DIGEST_JOB_OPTIONS = kindOptionsFor('digest');

/**
 * Makes the queue's digest schedulers match the configuration: one for DIGEST_CHANNEL at DIGEST_CRON
 * in DIGEST_TZ, none for any other channel (a channel that was configured before and is not now).
 * Every replica may call this at start-up; the outcome is the same however many do.
 */
export async function scheduleDigests(
  queue: Queue,
  config: Pick<DigestConfig, 'cron' | 'timezone' | 'channel'>,
  options: { jobOptions?: Partial<typeof DIGEST_JOB_OPTIONS> } = {},
): Promise<{ scheduled: string | null; removed: string[] }> {
  const wanted = config.channel ? digestSchedulerId(config.channel) : null;
  const removed: string[] = [];
  for (const s of await queue.getJobSchedulers(0, -1)) {
    const id = s.key;
    if (id.startsWith('digest-') && id !== wanted) {
      await queue.removeJobScheduler(id);
      removed.push(id);
    }
  }
  if (!config.channel || !wanted) return { scheduled: null, removed };
  const data: ScheduledDigestJob = ScheduledDigestJobSchema.parse({ channel: config.channel });
  for (let attempt = 1; ; attempt += 1) {
    try {
      await queue.upsertJobScheduler(
        wanted,
        { pattern: config.cron, tz: config.timezone },
        { name: DIGEST_JOB_NAME, data, opts: { ...DIGEST_JOB_OPTIONS, ...options.jobOptions } },
      );
      return { scheduled: wanted, removed };
    } catch (error) {
      if (!isIterationCollision(error) || attempt >= UPSERT_ATTEMPTS) throw error;
      await delay(UPSERT_RETRY_MS * attempt);
    }
  }
}

const UPSERT_ATTEMPTS = 5;
const UPSERT_RETRY_MS = 250;

/**
 * BullMQ refuses an upsert whose next iteration's job id is already taken by a job it cannot replace
 * (codes -10 and -11): another replica's worker took that iteration between this call reading the
 * clock and the script running. Transient: a moment later the next iteration is a later one.
 */
function isIterationCollision(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === ErrorCode.SchedulerJobIdCollision || code === ErrorCode.SchedulerJobSlotsBusy;
}

/**
 * Who claims a digest: this job, in every attempt of it, and no other. A scheduler's job ids repeat
 * in another queue (`repeat:<scheduler>:<time>`), so the queue and the job's creation time are part of it.
 */
export function claimOwnerOf(job: Pick<Job, 'id' | 'timestamp' | 'queueQualifiedName'>): string {
  return `${job.queueQualifiedName}/${job.id}@${job.timestamp}`;
}

/**
 * Processes one digest job: the window ends at the time the job was scheduled for (a job that runs
 * late still reports on its own day). Failures no retry can fix fail the job at once.
 */
export async function processDigestJob(
  deps: DigestDeps,
  job: Pick<Job, 'id' | 'data' | 'opts' | 'timestamp' | 'queueQualifiedName'>,
): Promise<DeliveryResult> {
  const parsed = ScheduledDigestJobSchema.safeParse(job.data);
  if (!parsed.success) throw new UnrecoverableError(`digest job ${job.id} has invalid data: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  const scheduledAt = new Date(job.opts.prevMillis ?? job.timestamp);
  try {
    return await deliverScheduledDigest(deps, { channel: parsed.data.channel, scheduledAt, owner: claimOwnerOf(job) });
  } catch (error) {
    if (error instanceof NonRetryableError) throw new UnrecoverableError(error.message);
    throw error;
  }
}

export interface DigestSchedulerHandle {
  queue: Queue;
  worker: Worker;
  scheduled: string | null;
  close(): Promise<void>;
}

/**
 * Starts the digest part of `serve`: reconciles the scheduler with the configuration and runs a
 * worker for digest jobs. Any number of replicas may run this; one digest per channel per day is
 * posted (deterministic scheduler id, plus the store's claim).
 */
export async function startDigestScheduler(options: {
  connection: ConnectionOptions;
  config: Pick<DigestConfig, 'cron' | 'timezone' | 'channel'>;
  deps: DigestDeps;
  /** Redis key prefix (tests give each their own). */
  prefix?: string;
  queueName?: string;
  logger?: Logger;
}): Promise<DigestSchedulerHandle> {
  const log = options.logger ?? silentLogger;
  const name = options.queueName ?? DIGEST_QUEUE;
  const base = { connection: options.connection, ...(options.prefix ? { prefix: options.prefix } : {}) };
  const queue = new Queue(name, base);
  const { scheduled, removed } = await scheduleDigests(queue, options.config);
  if (removed.length) log.info({ removed }, 'removed digest schedulers for channels no longer configured');
  log.info({ scheduled, cron: options.config.cron, tz: options.config.timezone }, scheduled ? 'digest scheduled' : 'no DIGEST_CHANNEL: no scheduled digest');
  if (scheduled && !chartTextRenders(options.deps.chart)) {
    log.warn('no font found: digest charts will have blank labels; install a TrueType font (e.g. Debian fonts-dejavu-core)');
  }
  const worker = new Worker(name, (job) => processDigestJob({ ...options.deps, logger: options.deps.logger ?? log }, job), { ...base, concurrency: 1 });
  worker.on('failed', (job, err) => log.error({ err, jobId: job?.id, attempts: job?.attemptsMade }, 'digest job failed'));
  worker.on('error', (err) => log.error({ err }, 'digest worker error'));
  return {
    queue,
    worker,
    scheduled,
    async close() {
      await worker.close();
      await queue.close();
    },
  };
}
