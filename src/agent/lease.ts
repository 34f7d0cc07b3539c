import { hostname } from 'node:os';
import { describeError, UserInputError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Store } from '../db/index.js';

export interface RunLease {
  owner: string;
  /** Stops the heartbeat and gives the lease up (a clean exit is not an interruption). */
  release(): Promise<void>;
}

/** Who hosts a run from this process: `terminal:<host>:<pid>`. */
export function terminalLeaseOwner(): string {
  return `terminal:${hostname()}:${process.pid}`;
}

/**
 * Takes the run's lease for this process and renews it every third of its length, so a process
 * that dies (kill -9, a lost machine) leaves a lease that expires: the run then shows as
 * interrupted and `kernelseek run --resume` may take it over. Throws UserInputError when another
 * live process holds the lease.
 */
export async function holdRunLease(store: Store, runId: string, options: { owner: string; seconds: number; logger: Logger }): Promise<RunLease> {
  const taken = await store.agentRuns.acquireLease(runId, options.owner, options.seconds);
  if (!taken) {
    const run = await store.runs.get(runId);
    const left = run?.leaseExpiresAt ? Math.max(0, Math.ceil((run.leaseExpiresAt.getTime() - Date.now()) / 1000)) : 0;
    throw new UserInputError(
      `Run ${runId} is hosted by ${run?.leaseOwner ?? 'another process'}, which is still alive (its heartbeat is current). Stop it there first, or, if that process is gone, try again in ${left} s.`,
      { code: 'run_leased' },
    );
  }
  let lost = false;
  const timer = setInterval(() => {
    store.agentRuns
      .renewLease(runId, options.owner, options.seconds)
      .then((held) => {
        if (!held && !lost) {
          lost = true;
          options.logger.warn({ runId }, 'the run lease was taken over by another process');
        }
      })
      .catch((error: unknown) => options.logger.warn({ runId, reason: describeError(error) }, 'could not renew the run lease'));
  }, Math.max(100, (options.seconds * 1000) / 3));
  timer.unref();
  return {
    owner: options.owner,
    async release() {
      clearInterval(timer);
      await store.agentRuns.releaseLease(runId, options.owner);
    },
  };
}
