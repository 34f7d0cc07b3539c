import { Redis, type RedisOptions } from 'ioredis';
import { listWorkers } from '../queue/heartbeat.js';
import { describeOtherHarness, matchWorkers } from '../queue/worker-match.js';
import type { WorkerAvailability } from './worker-wait.js';

/**
 * From the gpu-workers' heartbeats in Redis (src/queue/heartbeat.ts). With the server's harness
 * version, only workers of that version count as attached, and the others are named.
 */
export function createRedisWorkerAvailability(connection: RedisOptions, prefix: string, harness?: { id: string; version: string }): WorkerAvailability {
  const redis = new Redis({ ...connection, lazyConnect: true, maxRetriesPerRequest: 1 });
  return {
    async probe(queue) {
      const match = matchWorkers(await listWorkers(redis, prefix), queue, harness?.id);
      const workers = match.matching;
      const otherHarness = describeOtherHarness(match, harness?.version);
      return { attached: workers.length, idle: workers.filter((w) => w.slots.some((s) => s.jobId === null)).length, ...(otherHarness ? { otherHarness } : {}) };
    },
    async close() {
      redis.disconnect();
    },
  };
}
