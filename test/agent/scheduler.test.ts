import { describe, expect, it } from 'vitest';
import { createLocalTurnScheduler, type TurnJob } from '../../src/agent/scheduler.js';
import { silentLogger } from '../../src/core/logger.js';

// The in-process turn scheduler: a failing turn is retried with backoff, then its run fails; a
// scheduler closed during a backoff starts nothing more.
function processor(failures: number) {
  const attempts: number[] = [];
  const failed: unknown[] = [];
  return {
    attempts,
    failed,
    processTurn: async (job: TurnJob) => {
      attempts.push(Date.now());
      if (attempts.length <= failures) throw new Error(`the database is unreachable (turn ${job.turn})`);
    },
    failRun: async (_runId: string, error: unknown) => void failed.push(error),
  };
}

describe('the local turn scheduler', () => {
  it('retries a failing turn with growing delays and does not fail the run when a retry succeeds', async () => {
    const scheduler = createLocalTurnScheduler({ logger: silentLogger, retries: 3, retryDelayMs: 40 });
    const p = processor(2);
    scheduler.attach(p);
    await scheduler.schedule({ runId: 'ks-1', turn: 1 }, { delayMs: 0 });
    await scheduler.idle('ks-1');
    expect(p.attempts).toHaveLength(3);
    expect(p.failed).toEqual([]);
    // 40 ms, then 80 ms (timers fire a little early or late, never much early).
    expect(p.attempts[1]! - p.attempts[0]!).toBeGreaterThanOrEqual(35);
    expect(p.attempts[2]! - p.attempts[1]!).toBeGreaterThanOrEqual(75);
    scheduler.close();
  });

  it('fails the run with the last error once the retries are spent', async () => {
    const scheduler = createLocalTurnScheduler({ logger: silentLogger, retries: 2, retryDelayMs: 5 });
    const p = processor(Infinity);
    scheduler.attach(p);
    await scheduler.schedule({ runId: 'ks-2', turn: 4 }, { delayMs: 0 });
    await scheduler.idle('ks-2');
    expect(p.attempts).toHaveLength(3);
    expect(p.failed).toHaveLength(1);
    expect(String(p.failed[0])).toContain('the database is unreachable (turn 4)');
    scheduler.close();
  });

  it('starts no attempt after close(), even in the middle of a backoff', async () => {
    const scheduler = createLocalTurnScheduler({ logger: silentLogger, retries: 4, retryDelayMs: 60_000 });
    const p = processor(Infinity);
    scheduler.attach(p);
    await scheduler.schedule({ runId: 'ks-3', turn: 1 }, { delayMs: 0 });
    await new Promise((r) => setImmediate(r));
    expect(p.attempts).toHaveLength(1);
    const started = Date.now();
    scheduler.close();
    // The minute-long backoff ends at close: the chain settles at once, with no retry and no failed run.
    await scheduler.idle('ks-3');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(p.attempts).toHaveLength(1);
    expect(p.failed).toEqual([]);
  });
});
