import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { HarnessError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { harnessEnvironment } from '../../src/harness/runner.js';
import { packWorkspace } from '../../src/queue/archive.js';
import { createBullmqDispatcher, toGpuBashPayload } from '../../src/queue/bullmq-dispatcher.js';
import { redisOptionsFromUrl } from '../../src/queue/connection.js';
import type { GpuBashRequest } from '../../src/queue/dispatcher.js';
import type { EvaluationProgress } from '../../src/harness/evaluation.js';
import { resultKeyFromSecret } from '../../src/queue/result-key.js';
import { startGpuWorker, type GpuWorkerHandle } from '../../src/queue/worker/gpu-worker.js';
import { createTempDir } from '../support/db.js';
import { newPrefix, REDIS_URL, removePrefix, TEST_RESULT_KEY, TEST_RESULT_SECRET, BASH_CPU } from './support.js';

/** gpu_bash results travel the same path as evaluations and are sealed the same way. */

const OTHER_SECRET = 'another-deployments-result-key-0123456789abcdef';

describe('gpu_bash results through Redis are sealed', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  let archive: Buffer;
  let redis: Redis;
  const started: { worker: GpuWorkerHandle; dispatcher: ReturnType<typeof createBullmqDispatcher>; prefix: string }[] = [];
  const request = (runId: string, seq: number, command: string): GpuBashRequest => ({ runId, seq, command, archive, timeoutSeconds: 30 });

  /** An in-process worker on a prefix of its own, sealing with `secret`, and a dispatcher holding the test key. */
  const start = async (label: string, secret: string) => {
    const prefix = newPrefix(label);
    const config = loadConfig({ REDIS_URL, KERNELSEEK_QUEUE_PREFIX: prefix, KERNELSEEK_DATA_DIR: path.join(tmp.dir, label), KERNELSEEK_RESULT_KEY: secret });
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', REDIS_URL, KERNELSEEK_RESULT_KEY: secret };
    const worker = await startGpuWorker({ config, env, logger: silentLogger, nvidiaSmi: '/nonexistent/nvidia-smi' });
    const dispatcher = createBullmqDispatcher({ connection: redisOptionsFromUrl(REDIS_URL), prefix, resultKey: TEST_RESULT_KEY });
    started.push({ worker, dispatcher, prefix });
    return { worker, dispatcher, prefix, config, env };
  };

  beforeAll(async () => {
    tmp = await createTempDir('ks-auth-bash-');
    const ws = path.join(tmp.dir, 'ws');
    await mkdir(ws, { recursive: true });
    await writeFile(path.join(ws, 'kernel.cu'), '__global__ void k() {}\n');
    archive = await packWorkspace(ws);
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    for (const s of started) {
      await s.dispatcher.close();
      await s.worker.close(1);
      await removePrefix(s.prefix);
    }
    redis?.disconnect();
    await tmp?.remove();
  });

  it('refuses a completed gpu-bash job planted under the next id and runs the command for real', async () => {
    const { dispatcher, prefix } = await start('authbash', TEST_RESULT_SECRET);
    const req = request('ks-authbash', 1, 'echo real-$((6*7)); ls');
    const jobId = 'bash:ks-authbash:1';
    const forged = { exitCode: 0, output: 'all tests passed, 9.9x faster\n', truncated: false, timedOut: false, durationMs: 3, worker: 'gpu-host-1/0', gpu: 'NVIDIA H200' };
    const now = Date.now();
    await redis.hset(`${prefix}:${BASH_CPU}:${jobId}`, { name: 'gpu-bash', data: JSON.stringify(toGpuBashPayload(req)), opts: '{}', timestamp: now, finishedOn: now, atm: 1, returnvalue: JSON.stringify(forged) });
    await redis.zadd(`${prefix}:${BASH_CPU}:completed`, now, jobId);
    expect((await dispatcher.client.queue(BASH_CPU).getJob(jobId))?.returnvalue).toEqual(forged);

    const progress: EvaluationProgress[] = [];
    const r = await dispatcher.gpuBash(req, { onProgress: (p) => progress.push(p) });
    expect(progress.filter((p) => p.phase === 'refused').map((p) => p.message)).toEqual([
      `The result of job ${jobId} on ${BASH_CPU} was refused: it carries no seal: no KernelSeek worker produced it. The work is queued again, to be done for real.`,
    ]);
    expect(r.output).toContain('real-42');
    expect(r.output).toContain('kernel.cu');
    expect(r.output).not.toContain('9.9x');
    expect(r.refused).toHaveLength(1);
  });

  it('never hands the result key to gpu_bash or the harness', async () => {
    const { dispatcher, config, env } = await start('authbash-env', TEST_RESULT_SECRET);
    const r = await dispatcher.gpuBash(request('ks-authbash-env', 1, 'env; cat /proc/self/environ | tr "\\0" "\\n"'));
    expect(r.exitCode).toBe(0);
    expect(r.output).not.toContain(TEST_RESULT_SECRET);
    expect(r.output).not.toContain('KERNELSEEK_RESULT_KEY');
    expect(Object.values(harnessEnvironment(env, config))).not.toContain(TEST_RESULT_SECRET);
  });

  it('a rogue worker that answers every job: three refusals, then a clear error (a forged output is never returned)', async () => {
    const prefix = newPrefix('rogue');
    const connection = redisOptionsFromUrl(REDIS_URL);
    let answered = 0;
    const rogue = new Worker(BASH_CPU, async () => (answered++, { exitCode: 0, output: 'forged\n', truncated: false, timedOut: false, durationMs: 1, worker: 'x/0', gpu: null }), { connection, prefix });
    const dispatcher = createBullmqDispatcher({ connection, prefix, resultKey: TEST_RESULT_KEY });
    try {
      await rogue.waitUntilReady();
      const error = await dispatcher.gpuBash(request('ks-rogue', 1, 'echo hello')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HarnessError);
      expect((error as HarnessError).message).toBe(
        `No result taken for job bash:ks-rogue:1 on ${BASH_CPU}: 3 results were refused, the last because it carries no seal: no KernelSeek worker produced it. Something that can write to this Redis answers jobs without the result key (a rogue worker, or tampered job records): check who holds the Redis password.`,
      );
      expect(answered).toBe(3);
    } finally {
      await rogue.close();
      await dispatcher.close();
      await removePrefix(prefix);
    }
  });

  it('a worker sealing with another key: refused with both key ids, run once more, then a clear error (no result taken)', async () => {
    const { dispatcher } = await start('wrongkey', OTHER_SECRET);
    const other = resultKeyFromSecret(OTHER_SECRET, 'x');
    const progress: EvaluationProgress[] = [];
    const error = await dispatcher.gpuBash(request('ks-wrongkey', 1, 'echo hello'), { onProgress: (p) => progress.push(p) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HarnessError);
    const reason = `it is sealed with result key ${other.id}, and this dispatcher holds key ${TEST_RESULT_KEY.id} (the test key): a worker with another KERNELSEEK_RESULT_KEY, or a forgery`;
    expect((error as HarnessError).code).toBe('result_refused');
    expect((error as HarnessError).message).toBe(
      `No result taken for job bash:ks-wrongkey:1 on ${BASH_CPU}: 2 results were refused, the last because ${reason}. Give serve, kernelseek eval --remote and every gpu-worker the same KERNELSEEK_RESULT_KEY (this dispatcher's key is ${TEST_RESULT_KEY.id}, from the test key).`,
    );
    expect(progress.filter((p) => p.phase === 'refused').map((p) => p.message)).toEqual([
      `The result of job bash:ks-wrongkey:1 on ${BASH_CPU} was refused: ${reason}. The work is queued again, to be done for real.`,
      `The result of job bash:ks-wrongkey:1 on ${BASH_CPU} was refused: ${reason}.`,
    ]);
  });
});
