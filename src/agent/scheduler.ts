import pRetry from 'p-retry';
import { describeError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';

/** The payload of an `agent-turn` job. */
export interface TurnJob {
  runId: string;
  turn: number;
}

/**
 * How the next turn of a run gets run. In `serve` it is a BullMQ job (`agent-turn`, job id
 * `turn:<runId>:<turn>`, so scheduling twice is harmless); in `kernelseek run` and in tests, a timer
 * in this process.
 */
export interface TurnScheduler {
  /** Runs `job` after `delayMs` (0: as soon as possible). Idempotent per (runId, turn). */
  schedule(job: TurnJob, options: { delayMs: number }): Promise<void>;
  /** Runs an already scheduled, delayed `job` now (a question arrived while the run waited). */
  wake(job: TurnJob): Promise<void>;
}

export interface TurnProcessor {
  processTurn(job: TurnJob, options?: { signal?: AbortSignal }): Promise<unknown>;
  /** Called when a turn keeps failing: the run is marked failed with the error. */
  failRun(runId: string, error: unknown): Promise<void>;
}

/**
 * Runs turns in this process: one turn at a time per run, delayed turns on timers. A turn that
 * throws (the dispatcher or the database unreachable) is retried with exponential backoff (p-retry;
 * a TypeError, a bug that retrying cannot fix, is not retried), then the run fails.
 */
export function createLocalTurnScheduler(options: { logger: Logger; retries?: number; retryDelayMs?: number }) {
  let processor: TurnProcessor | undefined;
  const timers = new Map<string, { timer: NodeJS.Timeout; job: TurnJob }>();
  const chains = new Map<string, Promise<void>>();
  const retries = options.retries ?? 4;
  const baseDelay = options.retryDelayMs ?? 2000;
  let closed = false;
  // Ends a backoff at once when the scheduler closes: no turn starts after close().
  const closing = new AbortController();

  const run = (job: TurnJob) => {
    const previous = chains.get(job.runId) ?? Promise.resolve();
    const next = previous.then(async () => {
      const p = processor;
      if (closed || !p) return;
      try {
        await pRetry(() => p.processTurn(job), {
          retries,
          factor: 2,
          minTimeout: baseDelay,
          randomize: false,
          signal: closing.signal,
          onFailedAttempt: ({ error, attemptNumber }) => {
            if (closed) return;
            // The reason in words; the stack only at debug level (a terminal shows logs).
            options.logger.warn({ runId: job.runId, turn: job.turn, attempt: attemptNumber, reason: describeError(error) }, 'turn failed');
            options.logger.debug({ err: error, runId: job.runId }, 'turn failure details');
          },
        });
      } catch (error) {
        if (!closed) await p.failRun(job.runId, error).catch(() => {});
      }
    });
    chains.set(job.runId, next);
    return next;
  };

  const key = (job: TurnJob) => `${job.runId}:${job.turn}`;
  const scheduler: TurnScheduler & {
    attach(p: TurnProcessor): void;
    /** Turns waiting on a timer (a decision point's deadline), with when they run. */
    delayed(): TurnJob[];
    /** Resolves when no turn of `runId` is running or queued in this process. */
    idle(runId: string): Promise<void>;
    close(): void;
  } = {
    attach(p) {
      processor = p;
    },
    async schedule(job, { delayMs }) {
      if (closed) return;
      const k = key(job);
      if (timers.has(k)) return;
      if (delayMs <= 0) {
        void run(job);
        return;
      }
      const timer = setTimeout(() => {
        timers.delete(k);
        void run(job);
      }, delayMs);
      timers.set(k, { timer, job });
    },
    delayed() {
      return [...timers.values()].map((t) => t.job);
    },
    async wake(job) {
      const k = key(job);
      const pending = timers.get(k);
      if (pending) {
        clearTimeout(pending.timer);
        timers.delete(k);
      }
      void run(job);
    },
    async idle(runId) {
      for (;;) {
        const chain = chains.get(runId);
        await chain;
        if (chains.get(runId) === chain) return;
      }
    },
    close() {
      closed = true;
      closing.abort(new Error('the turn scheduler was closed'));
      for (const { timer } of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
  return scheduler;
}

export type LocalTurnScheduler = ReturnType<typeof createLocalTurnScheduler>;
