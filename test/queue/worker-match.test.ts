import { appendFile, chmod, cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentEngine, createBankQuestionSource, createLocalTurnScheduler, createRedisWorkerAvailability } from '../../src/agent/index.js';
import { loadConfig, REPO_ROOT } from '../../src/config/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { packWorkspace } from '../../src/queue/archive.js';
import { createBullmqDispatcher } from '../../src/queue/bullmq-dispatcher.js';
import { queueNameFor } from '../../src/queue/catalog.js';
import { redisOptionsFromUrl } from '../../src/queue/connection.js';
import { computeHarnessVersion, type HarnessVersion } from '../../src/queue/harness-version.js';
import { listWorkers, startHeartbeat } from '../../src/queue/heartbeat.js';
import { digestTaskFiles, packTask } from '../../src/queue/task-bundle.js';
import { startGpuWorker, type GpuWorkerHandle } from '../../src/queue/worker/gpu-worker.js';
import { endTurn, reply, toolUse } from '../support/anthropic/script.js';
import { startFakeAnthropic, type FakeAnthropic } from '../support/anthropic/server.js';
import { runKernelseek } from '../support/cli.js';
import { createTempDir } from '../support/db.js';
import { useServiceFixture } from '../support/fixture.js';
import { CORRECT } from '../agent/fixtures/kernels.js';
import { recordingReporter, testConfig, waitFor, type ReporterEvent } from '../agent/helpers.js';
import { BASELINE, EVAL_CPU, HARNESS, newPrefix, REDIS_URL, removePrefix, startWorker, TEST_RESULT_KEY, TEST_RESULT_SECRET, waitForLogLine, countLogLines, workerEnv, type WorkerProcess } from './support.js';

const SMALL = { peers: false, baseline: false } as const;
const connection = redisOptionsFromUrl(REDIS_URL);

/** The harness version of a checkout whose harness differs from this one by one byte (a server or worker of another release). */
async function otherHarness(dir: string): Promise<HarnessVersion> {
  const root = path.join(dir, 'other-checkout');
  await mkdir(root, { recursive: true });
  await cp(path.join(REPO_ROOT, 'package.json'), path.join(root, 'package.json'));
  await cp(path.join(REPO_ROOT, 'harness'), path.join(root, 'harness'), { recursive: true });
  await appendFile(path.join(root, 'harness', '__init__.py'), '\n# a later release\n');
  return computeHarnessVersion(root);
}

describe('workers that match their server: a gpu-worker process with no task of its own', () => {
  const prefix = newPrefix('match');
  const fx = useServiceFixture<{ close(): Promise<void> }>('pglite', 'ks-match-db-');
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  let worker: WorkerProcess;
  let serverTasks: string;
  let other: HarnessVersion;
  let redis: Redis;
  let anthropic: FakeAnthropic | undefined;

  beforeAll(async () => {
    tmp = await createTempDir('ks-match-');
    redis = new Redis(REDIS_URL);
    other = await otherHarness(tmp.dir);
    // The server's tasks: a task that exists only there (cpu_softmax under another name).
    serverTasks = path.join(tmp.dir, 'server-kernels');
    await cp(path.join(REPO_ROOT, 'kernels', 'cpu_softmax'), path.join(serverTasks, 'travel_softmax'), { recursive: true });
    const yaml = path.join(serverTasks, 'travel_softmax', 'task.yaml');
    await writeFile(yaml, (await readFile(yaml, 'utf8')).replace(/^name: cpu_softmax$/m, 'name: travel_softmax'));
    // The worker's checkout has no task at all.
    const empty = path.join(tmp.dir, 'worker-kernels');
    await mkdir(empty);
    worker = startWorker('cli', workerEnv(prefix, path.join(tmp.dir, 'worker-data'), { KERNELSEEK_TASKS_DIR: empty }));
    await worker.waitFor(/gpu-worker .* ready: eval-cpu, gpu-bash-cpu on cpu; harness \S+ \(queues eval-cpu@[0-9a-f]{12}, gpu-bash-cpu@[0-9a-f]{12}\)/, 60_000);
  }, 90_000);
  afterAll(async () => {
    await worker?.stop('SIGTERM');
    await anthropic?.close();
    redis?.disconnect();
    await removePrefix(prefix);
    await tmp?.remove();
  });

  it('announces its harness version and its (no) tasks, and evaluates a task it has no copy of, from the job', async () => {
    // The heartbeat is written as the worker starts, a moment after its ready line.
    const [beat] = await waitFor('the heartbeat', () => listWorkers(redis, prefix), (w) => w.length > 0, 10_000);
    expect(beat).toMatchObject({ harnessVersion: HARNESS.version, harnessId: HARNESS.id, tasks: {}, queues: [EVAL_CPU, queueNameFor('gpu-bash', 'cpu', HARNESS.id)] });
    const dispatcher = createBullmqDispatcher({ connection, prefix, resultKey: TEST_RESULT_KEY, tasksDir: serverTasks });
    try {
      const outcome = await dispatcher.evaluate({ task: 'travel_softmax', source: await readFile(BASELINE, 'utf8'), fileName: 'kernel.cpp', scenarios: 'r7-c33', runId: 'ks-travel', seq: 1, options: SMALL });
      expect(outcome.status).toBe('ok');
      if (outcome.status === 'harness_error') return;
      expect(outcome.result).toMatchObject({ task: 'travel_softmax', correct: true });
      await waitForLogLine([worker], 'evaluation finished', 'eval:ks-travel:1');
      const digest = (await dispatcher.payloadFor({ task: 'travel_softmax', source: 'x', fileName: 'kernel.cpp', scenarios: 'all' })).taskBundle!.digest;
      expect(worker.output()).toMatch(new RegExp(`"taskDigest":"${digest.slice(0, 16)}"`));
      // Written out on the worker under its digest, as the server has it.
      const written = path.join(tmp.dir, 'worker-data', 'job-tasks', digest.slice(0, 32), 'travel_softmax');
      expect((await readdir(written)).sort()).toEqual(['baseline.cpp', 'reference.py', 'task.yaml']);
    } finally {
      await dispatcher.close();
    }
  }, 60_000);

  it('never gives a job of another harness version to this worker; the run and the queue say why', async () => {
    expect(other.id).not.toBe(HARNESS.id);
    // A server of another release: its jobs go to the queue of its version.
    const stale = createBullmqDispatcher({ connection, prefix, resultKey: TEST_RESULT_KEY, harness: other, waitTimeoutSeconds: 3 });
    const current = createBullmqDispatcher({ connection, prefix, resultKey: TEST_RESULT_KEY });
    try {
      const source = await readFile(BASELINE, 'utf8');
      const request = { task: 'cpu_softmax', source, fileName: 'kernel.cpp', scenarios: 'r7-c33', options: SMALL };
      const notTaken = stale.evaluate({ ...request, runId: 'ks-other', seq: 1 }).then(
        (outcome) => outcome,
        (error: Error) => error,
      );
      // A job of this worker's version, sent after it, is taken and finished while the other waits:
      // the worker was free and did not take it.
      const taken = await current.evaluate({ ...request, runId: 'ks-same', seq: 1 });
      expect(taken.status).toBe('ok');
      const job = await stale.client.queue(queueNameFor('evaluate', 'cpu', other.id)).getJob('eval:ks-other:1');
      expect(await job?.getState()).toBe('waiting');
      expect(countLogLines(worker.output(), 'evaluation started', 'eval:ks-other:1')).toBe(0);
      // Its dispatcher gave up waiting after 3 s; the job stays queued for a worker of its version.
      expect(String(await notTaken)).toMatch(/timed out before finishing/);
      expect(await job?.getState()).toBe('waiting');
    } finally {
      await Promise.all([stale.close(), current.close()]);
    }

    // The run of such a server says why its evaluation waits (status card, terminal, kernelseek runs).
    anthropic = await startFakeAnthropic({
      script: [reply(toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: CORRECT }), toolUse('evaluate', { scenarios: 'quick' }))],
      fallback: () => endTurn('done'),
    });
    const config = testConfig(fx.dataDir, anthropic.url);
    const events: ReporterEvent[] = [];
    const scheduler = createLocalTurnScheduler({ logger: silentLogger });
    const dispatcher = createBullmqDispatcher({ connection, prefix, resultKey: TEST_RESULT_KEY, harness: other, waitTimeoutSeconds: 2 });
    const workers = createRedisWorkerAvailability(connection, prefix, other);
    const engine = createAgentEngine({ config, store: fx.db.store, dispatcher, scheduler, questions: createBankQuestionSource({ store: fx.db.store }), reporter: recordingReporter(events), workers });
    scheduler.attach(engine);
    fx.service = { close: async () => (scheduler.close(), await engine.close(), await dispatcher.close(), await workers.close()) };
    await engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true, scenarios: 'quick', budgets: { evals: 1 } });
    const why = `waiting for a gpu-worker (cpu): none attached with this server's harness; 1 attached runs another harness (${HARNESS.version}; this server's is ${other.version}) and will not take it: deploy the same KernelSeek version on them (docs/deploy.md, Upgrades)`;
    await waitFor('the waiting note', async () => events, (e) => e.some((x) => x.event === 'statusChanged' && x.data.run.waitingForWorker === why), 60_000);
    const warning = events.find((e) => e.event === 'error')!.data as unknown as { message: string };
    expect(warning.message).toBe(`The evaluation is ${why}; it starts when one is free.`);
  }, 120_000);

  it('kernelseek eval --remote says when only workers of another harness are attached', async () => {
    // A prefix of its own, where the one worker attached announces another harness version.
    const alone = newPrefix('match-eval');
    const beat = startHeartbeat(redis, alone, () => ({ id: 'gpu-7-1', host: 'gpu-7', pid: 1, arch: 'cpu', queues: [queueNameFor('evaluate', 'cpu', other.id), queueNameFor('gpu-bash', 'cpu', other.id)], slots: [{ gpuIndex: null, gpuName: null, jobId: null }], driver: null, harnessVersion: other.version, harnessId: other.id, startedAt: new Date().toISOString() }));
    try {
      await waitFor('the heartbeat', () => listWorkers(redis, alone), (w) => w.length === 1, 10_000);
      const controller = new AbortController();
      const running = runKernelseek(['eval', 'cpu_softmax', BASELINE, '--remote', '--scenarios', 'r7-c33'], { ...workerEnv(alone, path.join(tmp.dir, 'eval-data')), LOG_LEVEL: 'silent' }, { cwd: tmp.dir, signal: controller.signal });
      // Nothing will take the job: cancel it once it is queued (the command takes it out of the queue).
      const queue = queueNameFor('evaluate', 'cpu', HARNESS.id);
      await waitFor('the job to be queued', async () => (await redis.keys(`${alone}:${queue}:*`)).length, (n) => n > 0, 30_000);
      controller.abort();
      const r = await running;
      expect(r.code).toBe(130);
      expect(r.stderr).toContain(
        `No worker with this checkout's harness (${HARNESS.version}) is attached to eval-cpu right now; 1 attached runs another harness (${other.version}; this checkout's is ${HARNESS.version}) and will not take it: deploy the same KernelSeek version on them (docs/deploy.md, Upgrades): the job waits in ${queue} until one starts (Ctrl-C cancels it).`,
      );
    } finally {
      await beat.stop();
      await removePrefix(alone);
    }
  }, 60_000);

  it('never writes out nor runs a task planted in Redis without the key, even with a matching digest', async () => {
    const marker = path.join(tmp.dir, 'owned');
    const genuine = await packTask(path.join(REPO_ROOT, 'kernels', 'cpu_softmax'), 'cpu_softmax', TEST_RESULT_KEY);
    const evil = Buffer.from(`import pathlib\npathlib.Path(${JSON.stringify(marker)}).write_text("ran")\n`);
    const files = genuine.files.map((f) => (f.path === 'reference.py' ? { ...f, content: evil.toString('base64') } : f));
    const digest = digestTaskFiles(files.map((f) => ({ path: f.path, content: Buffer.from(f.content, 'base64') })));
    // Whoever can write to Redis adds a job under the worker's own queue, with the genuine seal of another digest.
    const dispatcher = createBullmqDispatcher({ connection, prefix, resultKey: TEST_RESULT_KEY });
    try {
      const queue = dispatcher.client.queue(EVAL_CPU);
      const events = await dispatcher.client.events(EVAL_CPU);
      const data = { task: 'cpu_softmax', source: await readFile(BASELINE, 'utf8'), fileName: 'kernel.cpp', scenarios: 'r7-c33', arch: 'cpu', options: SMALL, taskBundle: { ...genuine, files, digest } };
      const job = await queue.add('evaluate', data, { jobId: 'eval:ks-planted:1', attempts: 3 });
      await expect(job.waitUntilFinished(events, 30_000)).rejects.toThrow(/Task cpu_softmax in this job carries a seal that does not match it: it was not packed by a KernelSeek server holding this result key, or it was changed on the way\. Not evaluated\./);
      expect((await queue.getJob('eval:ks-planted:1'))?.attemptsMade).toBe(1);
      expect(existsSync(marker)).toBe(false);
      expect(existsSync(path.join(tmp.dir, 'worker-data', 'job-tasks', digest.slice(0, 32)))).toBe(false);
    } finally {
      await dispatcher.close();
    }
  }, 60_000);
});

describe('GPU hosts: two workers on one queue, queues per GPU kind, a drain that finishes the job (fake nvidia-smi)', () => {
  const prefix = newPrefix('gpus');
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  const handles: GpuWorkerHandle[] = [];
  let dispatcher: ReturnType<typeof createBullmqDispatcher>;
  let archive: Buffer;

  /** nvidia-smi as a host with these GPUs answers the worker's query (no GPU here: the one faked edge). */
  const fakeSmi = async (name: string, lines: string[]) => {
    const file = path.join(tmp.dir, name);
    await writeFile(file, `#!/bin/sh\ncat <<'EOF'\n${lines.join('\n')}\nEOF\n`);
    await chmod(file, 0o755);
    return file;
  };
  const start = async (nvidiaSmi: string, gpus?: number[]) => {
    const config = loadConfig({ REDIS_URL, KERNELSEEK_QUEUE_PREFIX: prefix, KERNELSEEK_DATA_DIR: path.join(tmp.dir, 'data'), KERNELSEEK_RESULT_KEY: TEST_RESULT_SECRET, KERNELSEEK_WORKER_LOCK: '4s', KERNELSEEK_WORKER_STALLED_CHECK: '2s', PATH: process.env.PATH }, { cwd: tmp.dir });
    const handle = await startGpuWorker({ config, env: { PATH: process.env.PATH }, logger: silentLogger, nvidiaSmi, ...(gpus ? { gpus } : {}) });
    handles.push(handle);
    return handle;
  };
  const bash = (runId: string, seq: number, command: string, arch: string) => dispatcher.gpuBash({ runId, seq, command, archive, timeoutSeconds: 60, arch });

  beforeAll(async () => {
    tmp = await createTempDir('ks-gpus-');
    const ws = path.join(tmp.dir, 'ws');
    await mkdir(ws);
    await writeFile(path.join(ws, 'notes.md'), 'a workspace\n');
    archive = await packWorkspace(ws);
    dispatcher = createBullmqDispatcher({ connection, prefix, resultKey: TEST_RESULT_KEY });
  });
  afterAll(async () => {
    await Promise.all(handles.map((h) => h.close(1)));
    await dispatcher?.close();
    await removePrefix(prefix);
    await tmp?.remove();
  });

  it('two workers, one GPU each, share the sm_90 queue: each takes one of two jobs; an sm_100 job goes only to the sm_100 host', async () => {
    const hopper = await fakeSmi('smi-hopper', ['0, NVIDIA H100 80GB HBM3, 580.159.04, 81559, 9.0', '1, NVIDIA H100 80GB HBM3, 580.159.04, 81559, 9.0']);
    const blackwell = await fakeSmi('smi-blackwell', ['0, NVIDIA B200, 580.159.04, 183359, 10.0']);
    const [a, b, c] = [await start(hopper, [0]), await start(hopper, [1]), await start(blackwell)];
    expect([a.queues, b.queues, c.queues]).toEqual([
      [`eval-sm_90@${HARNESS.id}`, `gpu-bash-sm_90@${HARNESS.id}`],
      [`eval-sm_90@${HARNESS.id}`, `gpu-bash-sm_90@${HARNESS.id}`],
      [`eval-sm_100@${HARNESS.id}`, `gpu-bash-sm_100@${HARNESS.id}`],
    ]);
    // Both jobs run at once (each holds its GPU for a while), so neither worker can take the second.
    const [one, two, kind] = await Promise.all([
      bash('ks-two', 1, 'sleep 1.5; echo "gpu $CUDA_VISIBLE_DEVICES"', 'sm_90'),
      bash('ks-two', 2, 'sleep 1.5; echo "gpu $CUDA_VISIBLE_DEVICES"', 'sm_90'),
      bash('ks-kind', 1, 'echo "gpu $CUDA_VISIBLE_DEVICES"', 'sm_100'),
    ]);
    expect([one.exitCode, two.exitCode, kind.exitCode]).toEqual([0, 0, 0]);
    expect([one.worker, two.worker].map((w) => w.split('/')[1]).sort()).toEqual(['0', '1']);
    expect([one.output, two.output].sort()).toEqual(['gpu 0\n', 'gpu 1\n']);
    expect(kind).toMatchObject({ gpu: 'NVIDIA B200', output: 'gpu 0\n' });
    expect([one.gpu, two.gpu]).toEqual(['NVIDIA H100 80GB HBM3', 'NVIDIA H100 80GB HBM3']);
  }, 60_000);

  it('a stopping worker (SIGTERM) takes no new job and finishes the one it runs within its grace', async () => {
    const [a, b] = handles;
    const running = bash('ks-drain', 1, 'sleep 2; echo finished', 'sm_90');
    // Wait until one of the two holds it, then stop that one with time to finish.
    const holder = await waitFor('a worker to take the job', async () => handles.find((h) => h.slots.some((s) => s.activeJob === 'bash:ks-drain:1')), (h) => h !== undefined, 10_000);
    const closing = holder!.close(30);
    const next = bash('ks-drain', 2, 'echo next', 'sm_90');
    const [done, after] = await Promise.all([running, next]);
    await closing;
    expect(done).toMatchObject({ exitCode: 0, output: 'finished\n', worker: expect.stringMatching(new RegExp(`/${holder!.slots[0]!.gpuIndex}$`)) });
    // The job sent during the drain went to the other sm_90 worker.
    const other = holder === a ? b! : a!;
    expect(after.worker).toMatch(new RegExp(`/${other.slots[0]!.gpuIndex}$`));
    handles.splice(handles.indexOf(holder!), 1);
  }, 60_000);
});
