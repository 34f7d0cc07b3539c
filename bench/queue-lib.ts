/**
 * Measuring the queue: worker processes, one job's timeline, percentiles. Shared by
 * bench/queue.bench.ts (`npm run bench`) and bench/queue-overhead.ts (scripts/gpu-e2e.sh).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { REPO_ROOT, type Config, type Env } from '../src/config/index.js';
import { runHarness } from '../src/harness/runner.js';
import type { createBullmqDispatcher } from '../src/queue/bullmq-dispatcher.js';
import { queueNameFor } from '../src/queue/catalog.js';
import type { EvaluationRequest } from '../src/queue/dispatcher.js';

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  // Nearest rank: with few samples, p99 is the largest, and says so in the printout.
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export const ms = (v: number) => `${v.toFixed(0)} ms`;

export interface WorkerProc {
  child: ChildProcess;
  output: () => string;
}

/** Starts `kernelseek gpu-worker` processes and resolves once each printed its ready line. */
export async function startWorkers(count: number, env: Record<string, string>, args: string[] = [], node = process.execPath): Promise<WorkerProc[]> {
  const procs = Array.from({ length: count }, () => {
    const child = spawn(node, [path.join(REPO_ROOT, 'bin', 'kernelseek.js'), 'gpu-worker', ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout!.on('data', (d) => (text += String(d)));
    child.stderr!.on('data', (d) => (text += String(d)));
    return { child, output: () => text };
  });
  await Promise.all(
    procs.map(
      (p) =>
        new Promise<void>((resolve, reject) => {
          const timer = setInterval(() => {
            if (/gpu-worker .* ready/.test(p.output())) {
              clearInterval(timer);
              resolve();
            } else if (p.child.exitCode !== null) {
              clearInterval(timer);
              reject(new Error(`worker exited before it was ready:\n${p.output()}`));
            }
          }, 100);
        }),
    ),
  );
  return procs;
}

export async function stopWorkers(procs: WorkerProc[]): Promise<void> {
  await Promise.all(
    procs.map(
      (p) =>
        new Promise<void>((resolve) => {
          if (p.child.exitCode !== null || p.child.signalCode !== null) return resolve();
          p.child.once('exit', () => resolve());
          p.child.kill('SIGTERM');
        }),
    ),
  );
}

export const uniqueRun = () => `bench-${randomBytes(4).toString('hex')}`;

/** One job through the queue, taken apart. */
export interface RemoteSample {
  /** From the call to `evaluate` to its result, on the producer's clock. */
  totalMs: number;
  /** The harness process as the worker timed it (spawn to exit). */
  harnessMs: number;
  /** `totalMs - harnessMs`: what the queue and the worker add around the harness. */
  addedMs: number;
  /** Added to the queue until a worker took it (BullMQ's timestamps). */
  waitMs: number;
  status: string;
}

export async function measureRemote(dispatcher: ReturnType<typeof createBullmqDispatcher>, request: EvaluationRequest): Promise<RemoteSample> {
  const t0 = performance.now();
  const outcome = await dispatcher.evaluate(request);
  const totalMs = performance.now() - t0;
  // The queue of this dispatcher's harness version (src/queue/catalog.ts).
  const job = await dispatcher.client.queue(queueNameFor('evaluate', request.arch ?? 'cpu', (await dispatcher.harness()).id)).getJob(outcome.jobId);
  const waitMs = job?.processedOn && job.timestamp ? job.processedOn - job.timestamp : Number.NaN;
  const harnessMs = outcome.wallSeconds * 1000;
  return { totalMs, harnessMs, addedMs: totalMs - harnessMs, waitMs, status: outcome.status };
}

/** The same evaluation as a direct harness call in this process (what `kernelseek eval` does locally). */
export async function measureDirect(config: Config, env: Env, request: EvaluationRequest, gpuIndex?: number | null): Promise<{ totalMs: number; status: string }> {
  const t0 = performance.now();
  const outcome = await runHarness(
    { task: request.task, source: request.source, fileName: request.fileName, scenarios: request.scenarios, device: request.device, options: request.options },
    { config, env, gpuIndex },
  );
  return { totalMs: performance.now() - t0, status: outcome.status };
}
