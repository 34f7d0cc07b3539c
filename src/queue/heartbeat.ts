import type { Redis } from 'ioredis';
import { z } from 'zod';

/**
 * GPU workers announce themselves with a key that expires unless refreshed: `kernelseek queues`
 * lists the keys that exist, so a worker that died disappears within a few beats.
 */
export const HEARTBEAT_INTERVAL_MS = 5_000;
const TTL_SECONDS = 3 * (HEARTBEAT_INTERVAL_MS / 1000);

export const WorkerSlotSchema = z.object({
  gpuIndex: z.number().nullable(),
  gpuName: z.string().nullable(),
  /** The job this slot is running, if any. */
  jobId: z.string().nullable(),
});

export const WorkerHeartbeatSchema = z.object({
  id: z.string(),
  host: z.string(),
  pid: z.number(),
  arch: z.string(),
  queues: z.array(z.string()),
  slots: z.array(WorkerSlotSchema),
  driver: z.string().nullable(),
  /** `0.1.0+3f2a9c01b7de` (src/queue/harness-version.ts); an older worker's own wording, or null. */
  harnessVersion: z.string().nullable(),
  /** The id its queues carry (`eval-sm_90@<id>`); absent from workers older than per-version queues. */
  harnessId: z.string().nullable().optional(),
  /**
   * The tasks of the worker's own checkout, name → the first 16 hex digits of their digest. Shown,
   * not needed: a job carries its task (src/queue/task-bundle.ts).
   */
  tasks: z.record(z.string(), z.string()).optional(),
  startedAt: z.string(),
  lastBeat: z.string(),
});
export type WorkerHeartbeat = z.infer<typeof WorkerHeartbeatSchema>;

export function heartbeatKey(prefix: string, id: string): string {
  return `${prefix}:_workers:${id}`;
}

export interface Heartbeat {
  /** Writes the state now (a slot took or finished a job), not only at the next interval. */
  beat(): void;
  stop(): Promise<void>;
}

/** Writes the worker's state now and every few seconds; `stop` removes the key. */
export function startHeartbeat(redis: Redis, prefix: string, state: () => Omit<WorkerHeartbeat, 'lastBeat'>, onError?: (error: unknown) => void): Heartbeat {
  let stopped = false;
  const beat = async () => {
    if (stopped) return;
    const s = state();
    await redis.set(heartbeatKey(prefix, s.id), JSON.stringify({ ...s, lastBeat: new Date().toISOString() }), 'EX', TTL_SECONDS);
  };
  const safeBeat = () => beat().catch((e) => onError?.(e));
  void safeBeat();
  const timer = setInterval(safeBeat, HEARTBEAT_INTERVAL_MS);
  timer.unref();
  return {
    beat: () => void safeBeat(),
    async stop() {
      stopped = true;
      clearInterval(timer);
      await redis.del(heartbeatKey(prefix, state().id)).catch((e) => onError?.(e));
    },
  };
}

/** The workers whose heartbeat has not expired, by host. */
export async function listWorkers(redis: Redis, prefix: string): Promise<WorkerHeartbeat[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', heartbeatKey(prefix, '*'), 'COUNT', 200);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  if (keys.length === 0) return [];
  const values = await redis.mget(...keys);
  const workers: WorkerHeartbeat[] = [];
  for (const v of values) {
    if (!v) continue;
    try {
      const parsed = WorkerHeartbeatSchema.safeParse(JSON.parse(v));
      if (parsed.success) workers.push(parsed.data);
    } catch {
      // A key written by something else under our prefix: not a worker.
    }
  }
  return workers.sort((a, b) => a.host.localeCompare(b.host) || a.pid - b.pid);
}
