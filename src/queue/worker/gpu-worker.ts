import { setTimeout as delay } from 'node:timers/promises';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Config, Env } from '../../config/index.js';
import { UserInputError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { harnessEnvironment } from '../../harness/runner.js';
import { resolvePython } from '../../harness/runner-python.js';
import { loadTaskCatalog } from '../../harness/tasks.js';
import { JOB_KINDS, queueNameFor } from '../catalog.js';
import { redisOptionsFromUrl } from '../connection.js';
import type { ExecutorInfo } from '../../harness/evaluation.js';
import { detectGpus, type GpuInfo } from '../gpus.js';
import { computeHarnessVersion, type HarnessVersion } from '../harness-version.js';
import { startHeartbeat, type Heartbeat } from '../heartbeat.js';
import { createKindWorker, type KindProcessor } from '../kind-worker.js';
import { ARCH_RE } from '../payloads.js';
import { loadResultKey, type ResultKey } from '../result-key.js';
import { sealResult, type SealedKind } from '../result-seal.js';
import { readTaskFolder } from '../task-bundle.js';
import { createEvaluateProcessor, createGpuBashProcessor, type Slot } from './processors.js';
import { createSlotLock } from './slot-lock.js';
import { sweepStaleJobDirs } from './sweep.js';

async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  const timer = new AbortController();
  try {
    return await Promise.race([promise, delay(ms, 'timeout' as const, { signal: timer.signal })]);
  } finally {
    timer.abort(); // the race has settled: the losing timer's AbortError is handled by it
  }
}

/**
 * Seals what a processor returns: the dispatcher takes only results sealed with the result key,
 * bound to this job's id and the payload as this worker received and ran it.
 */
function sealing<K extends SealedKind>(kind: K, key: ResultKey, processor: KindProcessor<K, object>): KindProcessor<K> {
  return async (payload, ctx) => sealResult(key, { kind, jobId: String(ctx.job.id), payload }, await processor(payload, ctx));
}

export interface GpuWorkerOptions {
  config: Config;
  env: Env;
  logger: Logger;
  /** Only these GPU indices (nvidia-smi numbering); all when unset. */
  gpus?: number[];
  /** The queues' architecture; by default the GPUs' own (compute capability). */
  arch?: string;
  /** Parallel jobs on a host without GPUs (each its own slot). GPUs always take one job each. */
  concurrency?: number;
  nvidiaSmi?: string;
  /** After the grace period, how long closing may wait for Redis (default 10 s). */
  closeTimeoutSeconds?: number;
}

export interface GpuWorkerHandle {
  id: string;
  arch: string;
  queues: string[];
  slots: Slot[];
  /** Why no GPU is used, on a CPU-only host. */
  cpuReason: string | null;
  /** The fingerprint of the key results are sealed with (never the key). */
  resultKeyId: string;
  /** The harness version it evaluates with: it takes jobs only from that version's queues. */
  harness: HarnessVersion;
  /**
   * Graceful stop: take no new jobs, let the active ones finish for up to `graceSeconds`, then kill
   * them and hand them back to the queue; resolves when everything is closed.
   */
  close(graceSeconds?: number): Promise<void>;
}

/** The tasks of this host's own checkout and their digests, for the heartbeat (jobs bring their own). */
async function localTaskDigests(tasksDir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const catalog = await loadTaskCatalog(tasksDir).catch(() => ({ tasks: [] }));
  for (const t of catalog.tasks) {
    const folder = await readTaskFolder(t.dir).catch(() => undefined);
    if (folder) out[t.task.name] = folder.digest.slice(0, 16);
  }
  return out;
}

async function pickSlots(options: GpuWorkerOptions): Promise<{ gpus: GpuInfo[]; arch: string; cpuReason: string | null }> {
  const env = harnessEnvironment(options.env, options.config);
  const detection = await detectGpus(env, options.nvidiaSmi);
  if (options.arch !== undefined && !ARCH_RE.test(options.arch)) {
    throw new UserInputError(`--arch ${options.arch} is not an architecture: use sm_90 (Hopper), sm_100, ... or cpu.`);
  }
  if (detection.kind === 'none' || options.arch === 'cpu') {
    if (options.gpus?.length) throw new UserInputError(`--gpus ${options.gpus.join(',')} was given, but this host has no usable GPU (${detection.kind === 'none' ? detection.reason : 'arch cpu'}).`);
    return { gpus: [], arch: 'cpu', cpuReason: detection.kind === 'none' ? detection.reason : '--arch cpu' };
  }
  let gpus = detection.gpus;
  if (options.gpus?.length) {
    const missing = options.gpus.filter((i) => !gpus.some((g) => g.index === i));
    if (missing.length) throw new UserInputError(`--gpus: no GPU ${missing.join(', ')} on this host (it has ${gpus.map((g) => g.index).join(', ')}).`);
    gpus = gpus.filter((g) => options.gpus!.includes(g.index));
  }
  const archs = [...new Set(gpus.map((g) => g.arch))];
  const arch = options.arch ?? (archs.length === 1 ? archs[0] : null);
  if (!arch) {
    throw new UserInputError(
      archs.includes(null)
        ? 'This nvidia-smi does not report compute capability: pass --arch (e.g. --arch sm_90).'
        : `These GPUs have different architectures (${archs.join(', ')}): start one worker per architecture with --gpus and --arch.`,
    );
  }
  return { gpus, arch, cpuReason: null };
}

/**
 * Starts a GPU host's workers: per GPU one evaluation worker and one gpu_bash worker on the
 * queues of its architecture, sharing a lock so the GPU runs one job at a time, with the GPU
 * pinned by CUDA_VISIBLE_DEVICES. A host without GPUs serves the `cpu` queues.
 */
export async function startGpuWorker(options: GpuWorkerOptions): Promise<GpuWorkerHandle> {
  const { config, logger } = options;
  const concurrency = options.concurrency ?? 1;
  const { gpus, arch, cpuReason } = await pickSlots(options);
  if (gpus.length > 0 && concurrency !== 1) {
    throw new UserInputError('--concurrency applies to hosts without GPUs: on a GPU host each GPU runs one job at a time, so timings stay clean.');
  }
  const env = harnessEnvironment(options.env, config);
  const longestJob = Math.max(JOB_KINDS.evaluate.timeoutSeconds, JOB_KINDS['gpu-bash'].timeoutSeconds);
  const swept = await sweepStaleJobDirs(2 * longestJob);
  if (swept.length > 0) logger.info({ swept }, 'removed temp folders left by a crashed worker');
  const resultKey = await loadResultKey(config);
  logger.info({ resultKey: resultKey.id, from: resultKey.source }, 'results are sealed with this result key');
  const python = await resolvePython(config.harness.python, env);
  const harness = await computeHarnessVersion(config.core.repoRoot);
  const harnessVersion = harness.version;
  const tasks = await localTaskDigests(config.core.tasksDir);
  const host = os.hostname();
  const id = `${host}-${process.pid}`;
  const base: Omit<ExecutorInfo, 'gpuIndex' | 'gpuName'> = {
    host,
    driver: gpus[0]?.driver ?? null,
    harnessVersion,
    python: python.path,
    torch: python.torchVersion,
  };
  const slots: Slot[] =
    gpus.length > 0
      ? gpus.map((g) => ({ gpuIndex: g.index, gpuName: g.name, lock: createSlotLock(), activeJob: null, executor: { ...base, gpuIndex: g.index, gpuName: g.name } }))
      : Array.from({ length: concurrency }, () => ({ gpuIndex: null, gpuName: null, lock: createSlotLock(), activeJob: null, executor: { ...base, gpuIndex: null, gpuName: null } }));

  const connection = redisOptionsFromUrl(config.redis.url);
  const common = { connection, prefix: config.queue.prefix, arch, harnessId: harness.id, lockSeconds: config.queue.lockSeconds, stalledCheckSeconds: config.queue.stalledCheckSeconds };
  // Tasks that come with jobs are written out here, one folder per digest (src/queue/task-bundle.ts).
  const deps = { config, env: options.env, logger, resultKey, taskRoot: path.join(config.core.dataDir, 'job-tasks') };
  const workers: Worker[] = [];
  for (const slot of slots) {
    const name = `${id}/${slot.gpuIndex ?? 'cpu'}`;
    workers.push(createKindWorker('evaluate', sealing('evaluate', resultKey, createEvaluateProcessor(deps, slot)), { ...common, name }));
    workers.push(createKindWorker('gpu-bash', sealing('gpu-bash', resultKey, createGpuBashProcessor(deps, slot)), { ...common, name }));
  }
  for (const w of workers) {
    w.on('error', (err) => logger.error({ err, queue: w.name }, 'worker error'));
    w.on('failed', (job, err) => logger.warn({ jobId: job?.id, err: err.message }, 'job failed'));
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  const queues = [queueNameFor('evaluate', arch, harness.id), queueNameFor('gpu-bash', arch, harness.id)];

  const redis = new Redis(connection);
  // Connection trouble shows in the heartbeat's own warnings (and the workers' error events).
  redis.on('error', () => undefined);
  const startedAt = new Date().toISOString();
  const heartbeat: Heartbeat = startHeartbeat(
    redis,
    config.queue.prefix,
    () => ({
      id,
      host,
      pid: process.pid,
      arch,
      queues,
      slots: slots.map((s) => ({ gpuIndex: s.gpuIndex, gpuName: s.gpuName, jobId: s.activeJob })),
      driver: base.driver,
      harnessVersion,
      harnessId: harness.id,
      tasks,
      startedAt,
    }),
    (err) => logger.warn({ err }, 'heartbeat not written'),
  );
  for (const slot of slots) slot.onChange = () => heartbeat.beat();

  let closing: Promise<void> | undefined;
  return {
    id,
    arch,
    queues,
    slots,
    cpuReason,
    resultKeyId: resultKey.id,
    harness,
    close(graceSeconds = config.queue.graceSeconds) {
      const closeTimeoutMs = (options.closeTimeoutSeconds ?? 10) * 1000;
      closing ??= (async () => {
        const closed = Promise.all(workers.map((w) => w.close()));
        const timer = setTimeout(() => {
          logger.warn({ graceSeconds }, 'grace period over: stopping the active jobs and handing them back');
          for (const w of workers) w.cancelAllJobs('the worker is shutting down');
        }, graceSeconds * 1000);
        try {
          // Closing talks to Redis; if Redis is gone the worker must still be able to stop.
          if ((await within(closed, graceSeconds * 1000 + closeTimeoutMs)) === 'timeout') {
            logger.error('Redis did not answer while closing: stopping without it (active jobs go back to the queue when their lock expires)');
            await within(Promise.all(workers.map((w) => w.close(true))), closeTimeoutMs);
          }
        } finally {
          clearTimeout(timer);
          await within(heartbeat.stop(), closeTimeoutMs);
          redis.disconnect();
        }
      })();
      return closing;
    },
  };
}
