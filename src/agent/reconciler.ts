import { Worker, type ConnectionOptions } from 'bullmq';
import { describeError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { QueueClient } from '../queue/index.js';
import type { AgentEngine } from './engine.js';

/** The queue of the reconciler's scheduled job (one per cluster, whichever agent worker takes it). */
export const RECONCILE_QUEUE = 'agent-reconcile';
const SCHEDULER_ID = 'reconcile-live-runs';

export interface RunReconciler {
  close(): Promise<void>;
}

/**
 * Self-healing scheduling: a BullMQ job scheduler runs `resumeLiveRuns` every `everyMs` on one
 * agent worker of the cluster, so a live run whose turn job is gone (Redis lost its data) is
 * scheduled again: a waiting run at its deadline, any other at once. Scheduling is idempotent (the
 * job id is the turn), so a run whose job exists is left alone. Redis may lose the job scheduler
 * with everything else, so each agent process re-asserts it on the same period (an upsert of the
 * same scheduler is a no-op).
 */
export async function startRunReconciler(
  engine: AgentEngine,
  client: QueueClient,
  options: { connection: ConnectionOptions; prefix: string; everyMs: number; logger: Logger },
): Promise<RunReconciler> {
  const queue = client.queue(RECONCILE_QUEUE);
  const ensure = () =>
    queue.upsertJobScheduler(SCHEDULER_ID, { every: options.everyMs }, { name: 'reconcile', data: {}, opts: { removeOnComplete: 10, removeOnFail: 10 } });
  await ensure();
  const timer = setInterval(() => {
    ensure().catch((error: unknown) => options.logger.warn({ reason: describeError(error) }, 'could not re-assert the run reconciler'));
  }, options.everyMs);
  timer.unref();
  const worker = new Worker(
    RECONCILE_QUEUE,
    async () => {
      const resumed = await engine.resumeLiveRuns();
      return { checked: resumed.length };
    },
    { connection: options.connection, prefix: options.prefix, concurrency: 1, name: 'kernelseek-reconciler' },
  );
  worker.on('error', (error) => options.logger.warn({ reason: describeError(error) }, 'run reconciler worker error'));
  return {
    async close() {
      clearInterval(timer);
      await worker.close();
    },
  };
}
