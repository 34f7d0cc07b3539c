import { Queue, QueueEvents, type Job } from 'bullmq';
import type { RedisOptions } from 'ioredis';
import { UserInputError } from '../core/errors.js';
import { JOB_KINDS, jobOptionsFor, queueNameFor, type JobKind, type PayloadOf } from './catalog.js';
import { describeIssues } from './payloads.js';

export interface QueueClientOptions {
  connection: RedisOptions;
  prefix: string;
}

export interface EnqueuedJob {
  job: Job;
  queueName: string;
  /** False when a job with this id existed already (a duplicate: the work is not done twice). */
  created: boolean;
}

/**
 * Producer side of the catalog: validates a payload, adds the job under its deterministic id and
 * gives access to the queue's events (for waiting on results). Queues and event streams are opened
 * on first use and closed together.
 */
export interface QueueClient {
  /** `harnessId`: per-arch kinds go to the queue of that harness version (src/queue/catalog.ts). */
  enqueue<K extends JobKind>(kind: K, payload: PayloadOf<K>, options?: { arch?: string; harnessId?: string }): Promise<EnqueuedJob>;
  queue(name: string): Queue;
  events(name: string): Promise<QueueEvents>;
  close(): Promise<void>;
}

export function createQueueClient(options: QueueClientOptions): QueueClient {
  const queues = new Map<string, Queue>();
  const events = new Map<string, Promise<QueueEvents>>();
  const queue = (name: string) => {
    let q = queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: options.connection, prefix: options.prefix });
      queues.set(name, q);
    }
    return q;
  };
  return {
    queue,
    events(name) {
      let e = events.get(name);
      if (!e) {
        const qe = new QueueEvents(name, { connection: options.connection, prefix: options.prefix });
        e = qe.waitUntilReady().then(() => qe);
        events.set(name, e);
      }
      return e;
    },
    async enqueue(kind, payload, opts = {}) {
      const spec = JOB_KINDS[kind];
      const parsed = spec.payload.safeParse(payload);
      if (!parsed.success) throw new UserInputError(`Invalid ${kind} job: ${describeIssues(parsed.error)}`, { code: 'job_invalid' });
      const data = parsed.data as PayloadOf<typeof kind>;
      const arch = opts.arch ?? ('arch' in data ? (data as { arch: string }).arch : undefined);
      const queueName = queueNameFor(kind, arch, opts.harnessId);
      const q = queue(queueName);
      const jobOpts = jobOptionsFor(kind, data);
      const existing = await q.getJob(jobOpts.jobId);
      if (existing) {
        // A failed job produced no result: running it again duplicates nothing. Anything else
        // (waiting, running, completed) is the same work, and its result is the answer.
        if ((await existing.getState()) !== 'failed') return { job: existing, queueName, created: false };
        await existing.remove();
      }
      const job = await q.add(kind, data, jobOpts);
      return { job, queueName, created: true };
    },
    async close() {
      const all = await Promise.allSettled([...events.values()]);
      await Promise.all(all.map((r) => (r.status === 'fulfilled' ? r.value.close() : undefined)));
      await Promise.all([...queues.values()].map((q) => q.close()));
      events.clear();
      queues.clear();
    },
  };
}
