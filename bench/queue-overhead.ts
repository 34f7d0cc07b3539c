/**
 * What a job through the queue adds over a direct harness call, measured in pairs: each round runs
 * the same evaluation once directly (the harness in this process's child, as `kernelseek eval`
 * does) and once through Redis and an already-running gpu-worker, alternating which goes first.
 * Used by scripts/gpu-e2e.sh on the GPU host; runs anywhere a worker is attached.
 *
 *   node --import tsx bench/queue-overhead.ts --task flash_attn_fwd --kernel kernels/flash_attn_fwd/baseline.cu \
 *     --scenarios <filter> --jobs 20 --arch sm_90 [--gpu 0] [--out overhead.json]
 *
 * `--scenarios smallest-quick` picks the task's quick scenario with the fewest FLOPs (metrics.flops).
 * The --out file is rewritten after every round, so a run cut short still leaves its figures.
 * Reads REDIS_URL, KERNELSEEK_QUEUE_PREFIX and KERNELSEEK_DATA_DIR like the CLI.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/index.js';
import { evaluateExpression } from '../src/harness/expression.js';
import { findTask } from '../src/harness/tasks.js';
import { createBullmqDispatcher } from '../src/queue/bullmq-dispatcher.js';
import { loadResultKey } from '../src/queue/result-key.js';
import { redisOptionsFromUrl } from '../src/queue/connection.js';
import type { EvaluationRequest } from '../src/queue/dispatcher.js';
import { measureDirect, measureRemote, ms, percentile, uniqueRun } from './queue-lib.js';

const { values: args } = parseArgs({
  options: {
    task: { type: 'string' },
    kernel: { type: 'string' },
    scenarios: { type: 'string', default: 'quick' },
    jobs: { type: 'string', default: '20' },
    arch: { type: 'string' },
    gpu: { type: 'string' },
    out: { type: 'string' },
    'no-peers': { type: 'boolean', default: false },
    'no-baseline': { type: 'boolean', default: false },
  },
});
if (!args.task || !args.kernel) throw new Error('usage: queue-overhead.ts --task <task> --kernel <file> [--scenarios s] [--jobs n] [--arch a] [--gpu i] [--out f]');

const config = loadConfig(process.env);
const loaded = await findTask(config.core.tasksDir, args.task);
const { task } = loaded;
if (args.scenarios === 'smallest-quick') {
  const flops = (p: Record<string, number | string | boolean>) => Number(evaluateExpression(task.metrics.flops ?? '0', p as Record<string, number | boolean>));
  const pool = loaded.quick.length > 0 ? loaded.quick : loaded.scenarios;
  args.scenarios = [...pool].sort((a, b) => flops(a.params) - flops(b.params))[0]!.id;
}
const arch = args.arch ?? (task.device === 'cpu' ? 'cpu' : task.architectures[0]!);
const jobs = Number(args.jobs);
const gpuIndex = args.gpu === undefined ? null : Number(args.gpu);
const source = await readFile(path.resolve(args.kernel), 'utf8');
const run = uniqueRun();
const request = (seq: number): EvaluationRequest => ({
  task: task.name,
  source,
  fileName: task.kernel.file,
  scenarios: args.scenarios!,
  device: task.device,
  arch,
  runId: run,
  seq,
  options: { ...(args['no-peers'] ? { peers: false } : {}), ...(args['no-baseline'] ? { baseline: false } : {}) },
});
const dispatcher = createBullmqDispatcher({ connection: redisOptionsFromUrl(config.redis.url), prefix: config.queue.prefix, resultKey: await loadResultKey(config) });

const rounds: { direct: number; remote: number; added: number; workerSide: number; wait: number; harnessInWorker: number; status: string }[] = [];
try {
  // Warm both paths (compile cache, connections, the worker's first job) before measuring.
  await measureDirect(config, process.env, request(0), gpuIndex);
  await measureRemote(dispatcher, request(0));
  for (let i = 1; i <= jobs; i++) {
    let direct: Awaited<ReturnType<typeof measureDirect>>;
    let remote: Awaited<ReturnType<typeof measureRemote>>;
    // Alternate the order so that drift (clocks, thermals, caches) does not favour one path.
    if (i % 2 === 0) {
      direct = await measureDirect(config, process.env, request(i), gpuIndex);
      remote = await measureRemote(dispatcher, request(i));
    } else {
      remote = await measureRemote(dispatcher, request(i));
      direct = await measureDirect(config, process.env, request(i), gpuIndex);
    }
    const status = direct.status === remote.status ? direct.status : `${direct.status}/${remote.status}`;
    rounds.push({ direct: direct.totalMs, remote: remote.totalMs, added: remote.totalMs - direct.totalMs, workerSide: remote.addedMs, wait: remote.waitMs, harnessInWorker: remote.harnessMs, status });
    console.log(`round ${i}/${jobs}: direct ${ms(direct.totalMs)}, through the queue ${ms(remote.totalMs)} (${status})`);
    if (args.out) await writeFile(args.out, `${JSON.stringify(summarise(), null, 1)}\n`);
  }
  const summary = summarise();
  console.log(`\n${jobs} pairs (${task.name}, scenarios ${args.scenarios}, ${arch}):`);
  console.log(`  direct harness call        median ${ms(summary.direct_ms.median)}  p90 ${ms(summary.direct_ms.p90)}`);
  console.log(`  through queue + worker     median ${ms(summary.remote_ms.median)}  p90 ${ms(summary.remote_ms.p90)}`);
  console.log(`  added (remote - direct)    median ${ms(summary.added_ms.median)}  p90 ${ms(summary.added_ms.p90)}`);
  console.log(`  added around the harness   median ${ms(summary.added_by_queue_and_worker_ms.median)}  p90 ${ms(summary.added_by_queue_and_worker_ms.p90)}  (enqueue-to-result minus the worker's harness process time)`);
} finally {
  await dispatcher.close();
}

function summarise() {
  const stat = (key: keyof (typeof rounds)[number]) => {
    const v = rounds.map((r) => r[key] as number);
    return { median: percentile(v, 50), p90: percentile(v, 90), min: Math.min(...v), max: Math.max(...v) };
  };
  return {
    task: task.name,
    kernel: args.kernel,
    scenarios: args.scenarios,
    arch,
    jobs,
    direct_ms: stat('direct'),
    remote_ms: stat('remote'),
    added_ms: stat('added'),
    added_by_queue_and_worker_ms: stat('workerSide'),
    queue_wait_ms: stat('wait'),
    statuses: [...new Set(rounds.map((r) => r.status))],
    jobs_done: rounds.length,
    rounds,
  };
}
