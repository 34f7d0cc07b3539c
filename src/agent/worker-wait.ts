// Apart from worker-availability.ts (Redis): a turn asks for the sentence without loading ioredis,
// so `kernelseek run`, which has no workers to wait for, starts without it.
import { queueNameFor } from '../queue/catalog.js';

/** Whether a job sent to a queue will be taken soon: workers attached to it, and how many are free. */
export interface WorkerAvailability {
  /** `otherHarness`: workers of this pool that run another harness version, in words (they never take the job). */
  probe(queue: string): Promise<{ attached: number; idle: number; otherHarness?: string }>;
  close(): Promise<void>;
}

/**
 * The sentence a run shows while its evaluation or gpu_bash job waits for a worker, or null when
 * one is free: "waiting for a gpu-worker (sm_90): none attached".
 */
export async function workerWait(availability: WorkerAvailability, tool: string, arch: string | null): Promise<string | null> {
  const target = arch ?? 'cpu';
  const queue = queueNameFor(tool === 'gpu_bash' ? 'gpu-bash' : 'evaluate', target);
  const { attached, idle, otherHarness } = await availability.probe(queue);
  if (attached === 0) return `waiting for a gpu-worker (${target}): none attached${otherHarness ? ` with this server's harness; ${otherHarness}` : ''}`;
  if (idle === 0) return `waiting for a gpu-worker (${target}): all ${attached} attached are busy`;
  return null;
}
