import { Redis, type RedisOptions } from 'ioredis';
import { listWorkers } from '../queue/heartbeat.js';
import type { WorkerAvailability } from './worker-wait.js';

/** From the gpu-workers' heartbeats in Redis (src/queue/heartbeat.ts). */
export function createRedisWorkerAvailability(connection: RedisOptions, prefix: string): WorkerAvailability {
  const redis = new Redis({ ...connection, lazyConnect: true, maxRetriesPerRequest: 1 });
  return {
    async probe(queue) {
      const workers = (await listWorkers(redis, prefix)).filter((w) => w.queues.includes(queue));
      return { attached: workers.length, idle: workers.filter((w) => w.slots.some((s) => s.jobId === null)).length };
    },
    async close() {
      redis.disconnect();
    },
  };
}
