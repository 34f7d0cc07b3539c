import { readFile } from 'node:fs/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { REPO_ROOT } from '../../src/config/index.js';
import { resultKeyFromSecret } from '../../src/queue/result-key.js';

/** Shared by the queue tests: real Redis, a key prefix per test file, real worker processes. */

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const FIXTURES = path.join(REPO_ROOT, 'test', 'queue', 'fixtures');
export const BASELINE = path.join(REPO_ROOT, 'kernels', 'cpu_softmax', 'baseline.cpp');

/** The result key of this test file's workers and dispatchers (KERNELSEEK_RESULT_KEY). */
export const TEST_RESULT_SECRET = randomBytes(32).toString('hex');
export const TEST_RESULT_KEY = resultKeyFromSecret(TEST_RESULT_SECRET, 'the test key');

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

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything written so far (stdout and stderr, in arrival order). */
  output(): string;
  /** Resolves with the first match of `pattern` in the output, waiting up to `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts a worker process: `cli` runs `kernelseek gpu-worker`, anything else a behaviour script
 * from test/support/workers/ (as BullMQ's own tests name their fixture processes).
 */
export function startWorker(kind: 'cli' | string, env: Record<string, string>, args: string[] = []): WorkerProcess {
  const command =
    kind === 'cli'
      ? [path.join(REPO_ROOT, 'bin', 'kernelseek.js'), 'gpu-worker', ...args]
      : ['--import', 'tsx', path.join(REPO_ROOT, 'test', 'support', 'workers', `${kind}.ts`), ...args];
  const child = spawn(process.execPath, command, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const waiters = new Set<() => void>();
  const onData = (d: Buffer) => {
    text += d.toString();
    for (const w of waiters) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    output: () => text,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = text.match(pattern);
          if (m) {
            cleanup();
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`worker output did not match ${pattern} within ${timeoutMs} ms:\n${text.slice(-3000)}`));
        }, timeoutMs);
        const onExit = () => {
          check();
          cleanup();
          reject(new Error(`worker exited before its output matched ${pattern}:\n${text.slice(-3000)}`));
        };
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
          child.off('exit', onExit);
        };
        waiters.add(check);
        child.once('exit', onExit);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** Counts the lines of a worker's pino log with this message for this job. */
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
