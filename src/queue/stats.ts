import type { Redis } from 'ioredis';
import { JOB_KIND_NAMES, JOB_KINDS, queueNameFor } from './catalog.js';
import { listWorkers, type WorkerHeartbeat } from './heartbeat.js';
import type { QueueClient } from './producer.js';

export const COUNTED_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;
export type CountedState = (typeof COUNTED_STATES)[number];

export interface QueueStats {
  name: string;
  counts: Record<CountedState, number>;
}

export interface QueuesReport {
  prefix: string;
  /** The harness version of the checkout that made the report: the queues its jobs go to carry its id. */
  harness?: string;
  queues: QueueStats[];
  workers: WorkerHeartbeat[];
}

/** Queue names under a prefix: every queue BullMQ has written a meta key for. */
export async function discoverQueueNames(redis: Redis, prefix: string): Promise<string[]> {
  const names = new Set<string>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*:meta`, 'COUNT', 500);
    cursor = next;
    for (const key of keys) {
      const name = key.slice(prefix.length + 1, -':meta'.length);
      if (name && !name.includes(':')) names.add(name);
    }
  } while (cursor !== '0');
  return [...names];
}

/**
 * Counts per queue (the catalog's fixed queues, every per-arch queue in use and every queue a
 * worker listens on) and the workers whose heartbeat is current.
 */
export async function collectQueuesReport(client: QueueClient, redis: Redis, prefix: string, harness?: { id: string; version: string }): Promise<QueuesReport> {
  const workers = await listWorkers(redis, prefix);
  const names = new Set(await discoverQueueNames(redis, prefix));
  for (const kind of JOB_KIND_NAMES) if (!JOB_KINDS[kind].perArch) names.add(queueNameFor(kind));
  names.add(queueNameFor('evaluate', 'cpu', harness?.id));
  for (const w of workers) for (const q of w.queues) names.add(q);
  const queues = await Promise.all(
    [...names].sort().map(async (name) => {
      // BullMQ counts `prioritized` jobs apart from `waiting`; to a person both are waiting.
      const c = await client.queue(name).getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed', 'completed');
      return {
        name,
        counts: {
          waiting: (c.waiting ?? 0) + (c.prioritized ?? 0),
          active: c.active ?? 0,
          delayed: c.delayed ?? 0,
          failed: c.failed ?? 0,
          completed: c.completed ?? 0,
        },
      };
    }),
  );
  return { prefix, ...(harness ? { harness: harness.version } : {}), queues, workers };
}
