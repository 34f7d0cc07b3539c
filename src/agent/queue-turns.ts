import type { Worker } from 'bullmq';
import type { Logger } from '../core/logger.js';
import { createKindWorker, jobIdFor, jobOptionsFor, queueNameFor, type KindWorkerOptions, type QueueClient } from '../queue/index.js';
import type { AgentEngine } from './engine.js';
import type { TurnScheduler } from './scheduler.js';

/**
 * Turns as BullMQ `agent-turn` jobs (serve): the job id is `turn:<runId>:<turn>`, so scheduling a
 * turn twice adds it once; a decision point's wait is a delayed job, and a question that arrives
 * promotes it.
 */
export function createQueueTurnScheduler(client: QueueClient): TurnScheduler {
  const queue = () => client.queue(queueNameFor('agent-turn'));
  return {
    async schedule(job, { delayMs }) {
      await queue().add('agent-turn', job, { ...jobOptionsFor('agent-turn', job), ...(delayMs > 0 ? { delay: Math.round(delayMs) } : {}) });
    },
    async wake(job) {
      const existing = await queue().getJob(jobIdFor('agent-turn', job));
      if (!existing) {
        // The delayed turn is gone (Redis lost its data): the run must not wait forever for it.
        await queue().add('agent-turn', job, jobOptionsFor('agent-turn', job));
        return;
      }
      try {
        if (await existing.isDelayed()) await existing.promote();
      } catch {
        // It left the delayed set meanwhile (it is running or done): nothing to wake.
      }
    },
  };
}

/**
 * The worker that runs `agent-turn` jobs with the engine. A turn that fails (infrastructure) is
 * retried per the queue catalog; when its attempts are spent, the run is marked failed.
 */
export function startAgentTurnWorker(engine: AgentEngine, options: KindWorkerOptions & { logger: Logger }): Worker {
  const worker = createKindWorker('agent-turn', (payload, ctx) => engine.processTurn(payload, { signal: ctx.signal }), options);
  worker.on('failed', (job, error) => {
    if (!job) return;
    const attempts = job.opts.attempts ?? 1;
    if (job.attemptsMade >= attempts || error.name === 'UnrecoverableError') {
      void engine.failRun((job.data as { runId: string }).runId, error).catch((e: unknown) => options.logger.error({ err: e }, 'could not mark the run failed'));
    }
  });
  worker.on('error', (error) => options.logger.warn({ err: error }, 'agent-turn worker error'));
  return worker;
}
