import { splitQueueName } from './catalog.js';
import type { WorkerHeartbeat } from './heartbeat.js';

/** Which attached workers can take a job, and which could but for their harness version. */
export interface WorkerMatch {
  /** The queue the job goes to (with the harness id when one is given). */
  queue: string;
  /** Workers listening on that very queue. */
  matching: WorkerHeartbeat[];
  /** Workers of the same kind and architecture whose harness version differs: they will never take it. */
  otherHarness: WorkerHeartbeat[];
}

/**
 * Sorts the attached workers for one job of the pool `base` (`eval-sm_90`, queueNameFor without a
 * harness id): those on its queue, and those of its architecture that
 * run another harness (their queues carry another id, or none: a worker older than per-version
 * queues). Without `harnessId` every worker of the architecture's pool matches, as before.
 */
export function matchWorkers(workers: WorkerHeartbeat[], base: string, harnessId?: string): WorkerMatch {
  const queue = harnessId ? `${base}@${harnessId}` : base;
  const matching: WorkerHeartbeat[] = [];
  const otherHarness: WorkerHeartbeat[] = [];
  for (const w of workers) {
    const pools = w.queues.map(splitQueueName).filter((q) => q.base === base);
    if (pools.length === 0) continue;
    if (!harnessId || w.queues.includes(queue)) matching.push(w);
    else otherHarness.push(w);
  }
  return { queue, matching, otherHarness };
}

/**
 * The sentence for workers of the right architecture that run another harness, or null: what a
 * run's status card and `eval --remote` say when none of the attached workers can take the job.
 */
export function describeOtherHarness(match: WorkerMatch, expected: string | undefined, whose = "this server's"): string | null {
  if (match.otherHarness.length === 0) return null;
  const versions = [...new Set(match.otherHarness.map((w) => w.harnessVersion ?? 'unknown (an older worker)'))];
  const n = match.otherHarness.length;
  return `${n} attached ${n === 1 ? 'runs' : 'run'} another harness (${versions.join(', ')}; ${whose} is ${expected ?? 'unknown'}) and will not take it: deploy the same KernelSeek version on them (docs/deploy.md, Upgrades)`;
}
