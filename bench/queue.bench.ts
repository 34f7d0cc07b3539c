/**
 * Queue benchmark (real Redis, real `kernelseek gpu-worker` processes, the real harness on a
 * trivial evaluation: cpu_softmax, one 7x33 scenario, no peers, no baseline).
 *
 * 1. Overhead: jobs one after another through one worker; enqueue-to-result time minus the harness
 *    process's own wall time (as the worker measured it) is what the queue adds. p50 and p99.
 * 2. Throughput with 1, 2 and 4 worker processes: a batch submitted at once, jobs per minute.
 *
 * Environment: REDIS_URL, BENCH_QUEUE_JOBS (default 10), BENCH_QUEUE_THROUGHPUT_JOBS (default 8).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { REPO_ROOT } from '../src/config/index.js';
import { createBullmqDispatcher } from '../src/queue/bullmq-dispatcher.js';
import { resultKeyFromSecret } from '../src/queue/result-key.js';
import { redisOptionsFromUrl } from '../src/queue/connection.js';
import type { EvaluationRequest } from '../src/queue/dispatcher.js';
import { removePrefix } from '../test/queue/support.js';
import { measureRemote, ms, percentile, startWorkers, stopWorkers, uniqueRun, type RemoteSample } from './queue-lib.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const JOBS = Number(process.env.BENCH_QUEUE_JOBS ?? 10);
const THROUGHPUT_JOBS = Number(process.env.BENCH_QUEUE_THROUGHPUT_JOBS ?? 8);

const prefix = `ksbench-${uniqueRun()}`;
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ks-bench-queue-'));
const env: Record<string, string> = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? '/tmp',
  REDIS_URL,
  KERNELSEEK_QUEUE_PREFIX: prefix,
  KERNELSEEK_DATA_DIR: dataDir,
  KERNELSEEK_RESULT_KEY: randomBytes(32).toString('hex'),
  LOG_LEVEL: 'warn',
};
const source = await readFile(path.join(REPO_ROOT, 'kernels', 'cpu_softmax', 'baseline.cpp'), 'utf8');
const request = (runId: string, seq: number): EvaluationRequest => ({
  task: 'cpu_softmax',
  source,
  fileName: 'kernel.cpp',
  scenarios: 'r7-c33',
  arch: 'cpu',
  runId,
  seq,
  options: { peers: false, baseline: false },
});
const dispatcher = createBullmqDispatcher({ connection: redisOptionsFromUrl(REDIS_URL), prefix, resultKey: resultKeyFromSecret(env.KERNELSEEK_RESULT_KEY!, 'the benchmark') });

console.log(`queue benchmark: ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; prefix ${prefix}`);
console.log('trivial evaluation: cpu_softmax, scenario r7-c33, no peers, no baseline (the real harness)');

try {
  // 1. Overhead through one worker.
  let workers = await startWorkers(1, env);
  const run = uniqueRun();
  await measureRemote(dispatcher, request(run, 0)); // warm-up: compile cache, first connections
  const samples: RemoteSample[] = [];
  for (let i = 1; i <= JOBS; i++) samples.push(await measureRemote(dispatcher, request(run, i)));
  await stopWorkers(workers);
  const failed = samples.filter((s) => s.status !== 'ok').length;
  const row = (label: string, values: number[]) =>
    console.log(`  ${label.padEnd(34)} p50 ${ms(percentile(values, 50)).padStart(8)}   p99 ${ms(percentile(values, 99)).padStart(8)}   min ${ms(Math.min(...values)).padStart(8)}`);
  console.log(`\noverhead: ${JOBS} jobs in sequence, 1 worker${failed ? ` (${failed} not ok!)` : ''}; p99 of ${JOBS} samples is their maximum`);
  row('enqueue to result', samples.map((s) => s.totalMs));
  row('harness process (in the worker)', samples.map((s) => s.harnessMs));
  row('added by queue + worker', samples.map((s) => s.addedMs));
  row('  of which waiting for the worker', samples.map((s) => s.waitMs));

  // 2. Throughput with 1, 2 and 4 workers.
  console.log(`\nthroughput: ${THROUGHPUT_JOBS} jobs submitted at once`);
  console.log('  workers   wall (s)   jobs/min   mean job (s)');
  for (const count of [1, 2, 4]) {
    workers = await startWorkers(count, env);
    const batch = uniqueRun();
    await measureRemote(dispatcher, request(batch, 0)); // warm the compile cache for this batch
    const t0 = performance.now();
    const results = await Promise.all(Array.from({ length: THROUGHPUT_JOBS }, (_, i) => measureRemote(dispatcher, request(batch, i + 1))));
    const wall = (performance.now() - t0) / 1000;
    await stopWorkers(workers);
    const mean = results.reduce((a, r) => a + r.harnessMs, 0) / results.length / 1000;
    const bad = results.filter((r) => r.status !== 'ok').length;
    console.log(`  ${String(count).padStart(7)}   ${wall.toFixed(1).padStart(8)}   ${((THROUGHPUT_JOBS / wall) * 60).toFixed(1).padStart(8)}   ${mean.toFixed(1).padStart(12)}${bad ? `   (${bad} not ok!)` : ''}`);
  }
} finally {
  await dispatcher.close();
  await removePrefix(prefix, REDIS_URL);
  await rm(dataDir, { recursive: true, force: true });
}
