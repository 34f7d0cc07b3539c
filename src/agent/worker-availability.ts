import { Redis, type RedisOptions } from 'ioredis';
import { listWorkers, queueNameFor } from '../queue/index.js';

/** Whether a job sent to a queue will be taken soon: workers attached to it, and how many are free. */
export interface WorkerAvailability {
  probe(queue: string): Promise<{ attached: number; idle: number }>;
  close(): Promise<void>;
}

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

/**
 * The sentence a run shows while its evaluation or gpu_bash job waits for a worker, or null when
 * one is free: "waiting for a gpu-worker (sm_90): none attached".
 */
export async function workerWait(availability: WorkerAvailability, tool: string, arch: string | null): Promise<string | null> {
  const target = arch ?? 'cpu';
  const queue = queueNameFor(tool === 'gpu_bash' ? 'gpu-bash' : 'evaluate', target);
  const { attached, idle } = await availability.probe(queue);
  if (attached === 0) return `waiting for a gpu-worker (${target}): none attached`;
  if (idle === 0) return `waiting for a gpu-worker (${target}): all ${attached} attached are busy`;
  return null;
}
