import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { REPO_ROOT } from '../../src/config/index.js';
import { resultKeyFromSecret } from '../../src/queue/result-key.js';
import { queueNameFor } from '../../src/queue/catalog.js';
import { computeHarnessVersion } from '../../src/queue/harness-version.js';
import { spawnNode, type Spawned } from '../support/processes.js';

/** Shared by the queue tests: real Redis, a key prefix per test file, real worker processes. */

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const FIXTURES = path.join(REPO_ROOT, 'test', 'queue', 'fixtures');
export const BASELINE = path.join(REPO_ROOT, 'kernels', 'cpu_softmax', 'baseline.cpp');

/** The result key of this test file's workers and dispatchers (KERNELSEEK_RESULT_KEY). */
export const TEST_RESULT_SECRET = randomBytes(32).toString('hex');
export const TEST_RESULT_KEY = resultKeyFromSecret(TEST_RESULT_SECRET, 'the test key');

/** This checkout's harness version, and the cpu queues its jobs go to (src/queue/catalog.ts). */
export const HARNESS = await computeHarnessVersion(REPO_ROOT);
export const EVAL_CPU = queueNameFor('evaluate', 'cpu', HARNESS.id);
export const BASH_CPU = queueNameFor('gpu-bash', 'cpu', HARNESS.id);

export function newPrefix(label: string): string {
  return `kstest-${label}-${randomBytes(4).toString('hex')}`;
}

/** Deletes every key under the prefix (queues, jobs, events, heartbeats). */
export async function removePrefix(prefix: string, redisUrl = REDIS_URL): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/**
 * The environment a test worker process gets: its own prefix, short locks so recovery is quick, and
 * a temp folder inside the test's, so that what a SIGKILLed worker leaves behind goes with it.
 */
export function workerEnv(prefix: string, dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  const tmp = path.join(dataDir, 'tmp');
  mkdirSync(tmp, { recursive: true });
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    TMPDIR: tmp,
    REDIS_URL,
    KERNELSEEK_QUEUE_PREFIX: prefix,
    KERNELSEEK_DATA_DIR: dataDir,
    KERNELSEEK_RESULT_KEY: TEST_RESULT_SECRET,
    KERNELSEEK_WORKER_LOCK: '4s',
    KERNELSEEK_WORKER_STALLED_CHECK: '2s',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

/** A process that exists and is not a zombie (killed orphans wait for init to reap them). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** A worker process in a process group of its own (test/support/processes.ts), with the parent watchdog. */
export interface WorkerProcess extends Spawned {
  /** Signals the worker's process group (SIGTERM: a graceful stop) and waits until it has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts a worker process: `cli` runs `kernelseek gpu-worker` (bin/, which runs the build in dist/), anything else a
 * behaviour script from test/support/workers/ (as BullMQ's own tests name their fixture processes).
 * Whatever the worker starts in its group goes when it exits, and it ends when this test process dies.
 */
export function startWorker(kind: 'cli' | string, env: Record<string, string>, args: string[] = []): WorkerProcess {
  const spawned =
    kind === 'cli'
      ? spawnNode(path.join(REPO_ROOT, 'bin', 'kernelseek.js'), ['gpu-worker', ...args], { env })
      : spawnNode(path.join(REPO_ROOT, 'test', 'support', 'workers', `${kind}.ts`), args, { env });
  return { ...spawned, stop: (signal = 'SIGTERM') => spawned.kill(signal) };
}

/** A pattern for a worker's log line with this message about this job (fields in any order). */
export function logLine(msg: string, jobId: string): RegExp {
  const m = `"msg":"${msg}"`;
  const j = `"jobId":"${jobId}"`;
  return new RegExp(`${m}.*${j}|${j}.*${m}`);
}

/**
 * Waits until one of `workers` has logged `msg` about `jobId`. A job's result can reach the producer
 * a moment before the worker's own log line reaches the test through its pipe.
 */
export async function waitForLogLine(workers: WorkerProcess[], msg: string, jobId: string, timeoutMs = 10_000): Promise<void> {
  const pattern = logLine(msg, jobId);
  await Promise.any(workers.map((w) => w.waitFor(pattern, timeoutMs)));
}

export function countLogLines(output: string, msg: string, jobId: string): number {
  return output.split('\n').filter((l) => l.includes(`"msg":"${msg}"`) && l.includes(`"jobId":"${jobId}"`)).length;
}

/**
 * The shipped baseline made slow on purpose (a busy wait of 5 ms per call): an evaluation that lasts
 * long enough for a test to crash or stop its worker in the middle of it.
 */
export async function slowBaseline(): Promise<string> {
  const baseline = await readFile(BASELINE, 'utf8');
  const entry = 'extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {\n';
  if (!baseline.includes(entry)) throw new Error(`the cpu_softmax baseline no longer declares ${entry.trim()}`);
  return `#include <chrono>\n${baseline.replace(
    entry,
    `${entry}  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(5);\n  while (std::chrono::steady_clock::now() < until) {\n  }\n`,
  )}`;
}
