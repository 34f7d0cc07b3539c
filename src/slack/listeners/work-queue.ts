/**
 * Work done after an ack, a few tasks at a time. Starting a run parses its task and initialises a
 * git workspace: tens of milliseconds of CPU each on the event loop that must also ack the next
 * slash command within Slack's 3 seconds. Fifty starts at once, run all together, would hold every
 * ack behind all of that work; queued here, an ack waits for at most the few tasks in progress.
 */
export interface WorkQueue {
  run(task: () => Promise<void>): Promise<void>;
  /** Tasks queued or running. */
  size(): number;
  /** Resolves when nothing is queued or running. */
  idle(): Promise<void>;
}

export function createWorkQueue(concurrency: number): WorkQueue {
  const waiting: (() => void)[] = [];
  const idleWaiters: (() => void)[] = [];
  let active = 0;
  let pending = 0;
  const next = () => {
    while (active < concurrency && waiting.length > 0) {
      active += 1;
      waiting.shift()!();
    }
  };
  return {
    run(task) {
      pending += 1;
      return new Promise<void>((resolve) => {
        waiting.push(() => {
          task()
            .catch(() => {})
            .finally(() => {
              active -= 1;
              pending -= 1;
              resolve();
              if (pending === 0) for (const w of idleWaiters.splice(0)) w();
              next();
            });
        });
        next();
      });
    },
    size: () => pending,
    idle: () => (pending === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve))),
  };
}
