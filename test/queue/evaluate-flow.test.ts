import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvalResultSchema } from '../../src/harness/result.js';
import { createBullmqDispatcher } from '../../src/queue/bullmq-dispatcher.js';
import { redisOptionsFromUrl } from '../../src/queue/connection.js';
import type { EvaluationProgress, EvaluationRequest } from '../../src/queue/dispatcher.js';
import { runKernelseek } from '../support/cli.js';
import { createTempDir } from '../support/db.js';
import { BASELINE, countLogLines, FIXTURES, newPrefix, REDIS_URL, removePrefix, startWorker, TEST_RESULT_KEY, TEST_RESULT_SECRET, workerEnv, type WorkerProcess, EVAL_CPU, BASH_CPU, HARNESS } from './support.js';

const SMALL = { peers: false, baseline: false } as const;

describe('evaluations through Redis and a gpu-worker process (cpu host)', () => {
  const prefix = newPrefix('flow');
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  let env: Record<string, string>;
  let worker: WorkerProcess;
  let dispatcher: ReturnType<typeof createBullmqDispatcher>;
  let baseline: string;
  const request = (over: Partial<EvaluationRequest>): EvaluationRequest => ({
    task: 'cpu_softmax',
    source: baseline,
    fileName: 'kernel.cpp',
    scenarios: 'r7-c33',
    options: SMALL,
    ...over,
  });

  beforeAll(async () => {
    tmp = await createTempDir('ks-flow-');
    env = workerEnv(prefix, tmp.dir);
    baseline = await readFile(BASELINE, 'utf8');
    worker = startWorker('cli', env);
    await worker.waitFor(/gpu-worker .* ready: eval-cpu, gpu-bash-cpu/);
    dispatcher = createBullmqDispatcher({ connection: redisOptionsFromUrl(REDIS_URL), prefix, resultKey: TEST_RESULT_KEY });
  });
  afterAll(async () => {
    await dispatcher?.close();
    await worker?.stop('SIGTERM');
    await removePrefix(prefix);
    await tmp?.remove();
  });

  it('evaluates end to end: progress on the way, the result with the host, driver and harness version', async () => {
    const progress: EvaluationProgress[] = [];
    const outcome = await dispatcher.evaluate(request({ runId: 'ks-flow', seq: 1 }), { onProgress: (p) => progress.push(p) });
    expect(outcome.status === 'harness_error' ? outcome.message : outcome.status).toBe('ok');
    if (outcome.status === 'harness_error') return;
    expect(outcome.jobId).toBe('eval:ks-flow:1');
    expect(outcome.result.correct).toBe(true);
    expect(EvalResultSchema.safeParse(outcome.result).success).toBe(true);
    expect(outcome.worker).toMatch(/\/cpu$/);
    expect(outcome.executor).toMatchObject({ gpuIndex: null, gpuName: null, harnessVersion: expect.stringMatching(/^\d+\.\d+/) });
    expect((outcome.result as Record<string, unknown>).executor).toEqual(outcome.executor);
    expect(progress[0]).toMatchObject({ phase: 'queued', message: `queued as eval:ks-flow:1 on ${EVAL_CPU}` });
    expect(progress.map((p) => p.phase)).toEqual(expect.arrayContaining(['compile', 'scenario', 'done']));
  });

  it('runs a duplicate enqueue once and gives every caller the same result', async () => {
    const jobId = 'eval:ks-flow:2';
    const [a, b] = await Promise.all([dispatcher.evaluate(request({ runId: 'ks-flow', seq: 2 })), dispatcher.evaluate(request({ runId: 'ks-flow', seq: 2 }))]);
    const c = await dispatcher.evaluate(request({ runId: 'ks-flow', seq: 2 }));
    expect(a.status).toBe('ok');
    if (a.status === 'harness_error' || b.status === 'harness_error' || c.status === 'harness_error') throw new Error('harness_error');
    // The harness draws a fresh random seed per evaluation: equal seeds mean one evaluation.
    const seed = (a.result as unknown as { seeds: { base: number } }).seeds.base;
    expect((b.result as unknown as { seeds: { base: number } }).seeds.base).toBe(seed);
    expect((c.result as unknown as { seeds: { base: number } }).seeds.base).toBe(seed);
    expect(countLogLines(worker.output(), 'evaluation started', jobId)).toBe(1);
  });

  it('fails a malformed payload at once, without retries, with the reason', async () => {
    const queue = dispatcher.client.queue(EVAL_CPU);
    const events = await dispatcher.client.events(EVAL_CPU);
    const job = await queue.add('evaluate', { task: 'cpu_softmax', source: '', fileName: 'kernel.exe', scenarios: 'all', arch: 'cpu' }, { jobId: 'eval:bad:1', attempts: 5 });
    const started = Date.now();
    await expect(job.waitUntilFinished(events, 30_000)).rejects.toThrow(
      'invalid evaluate payload: source: source is empty; fileName: fileName must be a plain file name ending in .cu, .cpp or .py, or a folder name (kernel/)',
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    const failed = await queue.getJob('eval:bad:1');
    expect(failed?.attemptsMade).toBe(1);

    // Well-formed, but naming a task this host's checkout does not have: also final.
    const unknown = await queue.add('evaluate', { task: 'no_such_task', source: 'x', fileName: 'kernel.cpp', scenarios: 'all', arch: 'cpu' }, { jobId: 'eval:bad:2', attempts: 5 });
    await expect(unknown.waitUntilFinished(events, 30_000)).rejects.toThrow(/^Unknown task 'no_such_task'\. Available tasks: (\w+, )*cpu_softmax(, \w+)*\.$/);
    expect((await queue.getJob('eval:bad:2'))?.attemptsMade).toBe(1);
  });

  it('kills a hanging candidate at its timeout and takes the next job', async () => {
    const hang = await readFile(path.join(FIXTURES, 'hang.cpp'), 'utf8');
    const started = Date.now();
    // Queued together: the worker must come back from each hang to the next job.
    const [byCallTimeout, byTimeLimit, next] = await Promise.all([
      dispatcher.evaluate(request({ source: hang, runId: 'ks-hang', seq: 1, options: { ...SMALL, callTimeoutSeconds: 3 } })),
      dispatcher.evaluate(request({ source: hang, runId: 'ks-hang', seq: 2, options: { ...SMALL, callTimeoutSeconds: 600, timeoutSeconds: 40 } })),
      dispatcher.evaluate(request({ runId: 'ks-hang', seq: 3 })),
    ]);
    // The harness's own per-call timeout: a result with status timeout and the reason.
    expect(byCallTimeout.status, JSON.stringify(byCallTimeout).slice(0, 2000)).toBe('timeout');
    if (byCallTimeout.status !== 'harness_error') {
      expect(byCallTimeout.result.scenarios[0]).toMatchObject({ id: 'r7-c33', correct: false, status: 'timeout' });
    }
    // The evaluation's time limit (the job's 40 s less the worker's 4 s margin) stops the hanging call
    // inside the scenario: a result with status timeout, and the reason. (The worker's own hard limit,
    // for a harness that does not stop itself, is covered in test/harness/runner.test.ts.)
    expect(byTimeLimit.status, JSON.stringify(byTimeLimit).slice(0, 2000)).toBe('timeout');
    if (byTimeLimit.status !== 'harness_error') {
      expect(byTimeLimit.result.scenarios[0]?.reason).toMatch(/the evaluation's time limit was reached during this scenario/);
    }
    expect(next.status).toBe('ok');
    expect(Date.now() - started).toBeLessThan(120_000);
  }, 180_000);

  it('shows counts per queue and the attached worker (kernelseek queues)', async () => {
    const cliEnv = { REDIS_URL, KERNELSEEK_QUEUE_PREFIX: prefix, KERNELSEEK_DATA_DIR: tmp.dir, KERNELSEEK_RESULT_KEY: TEST_RESULT_SECRET };
    const json = await runKernelseek(['queues', '--json'], cliEnv);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as { queues: { name: string; counts: Record<string, number> }[]; workers: { arch: string; queues: string[]; harnessVersion: string }[] };
    const evalCpu = report.queues.find((q) => q.name === EVAL_CPU);
    expect(evalCpu?.counts).toMatchObject({ waiting: 0, active: 0, failed: 2, completed: 5 });
    expect(report.queues.map((q) => q.name)).toEqual(expect.arrayContaining(['agent-turn', 'digest', EVAL_CPU, BASH_CPU]));
    expect(report.workers).toHaveLength(1);
    expect(report.workers[0]).toMatchObject({ arch: 'cpu', queues: [EVAL_CPU, BASH_CPU], harnessVersion: HARNESS.version });
    const text = await runKernelseek(['queues'], cliEnv);
    expect(text.stdout).toMatch(new RegExp(`${EVAL_CPU}\\s+0\\s+0\\s+0\\s+2\\s+5`));
    expect(text.stdout).toMatch(/-\d+\s+cpu\s+cpu\s+-/);
  });

  it('kernelseek eval --remote prints the table, and with --json only the result JSON', async () => {
    const cliEnv = { REDIS_URL, KERNELSEEK_QUEUE_PREFIX: prefix, KERNELSEEK_DATA_DIR: tmp.dir, KERNELSEEK_RESULT_KEY: TEST_RESULT_SECRET };
    const table = await runKernelseek(['eval', 'cpu_softmax', BASELINE, '--remote', '--scenarios', 'r7-c33', '--no-peers'], cliEnv);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^scenario\s+status/);
    expect(table.stdout).toMatch(/r7-c33\s+ok/);
    expect(table.stdout).toMatch(/ran on: .*\/cpu \(cpu, harness \d/);
    expect(table.stderr).toMatch(new RegExp(`queued as eval:adhoc:[0-9a-f]{32} on ${EVAL_CPU}`));
    const json = await runKernelseek(['eval', 'cpu_softmax', BASELINE, '--remote', '--scenarios', 'r7-c33', '--no-peers', '--json'], cliEnv);
    expect(json.code).toBe(0);
    expect(EvalResultSchema.safeParse(JSON.parse(json.stdout)).success).toBe(true);

    const wrongArch = await runKernelseek(['eval', 'cpu_softmax', BASELINE, '--remote', '--arch', 'sm_90'], cliEnv);
    expect(wrongArch.code).toBe(1);
    expect(wrongArch.stderr).toContain('cpu_softmax is a cpu task: it runs on the eval-cpu queue; drop --arch sm_90.');
  }, 120_000);
});

describe('kernelseek eval --remote without Redis', () => {
  it('says Redis cannot be reached, at once', async () => {
    const r = await runKernelseek(['eval', 'cpu_softmax', BASELINE, '--remote'], { REDIS_URL: 'redis://127.0.0.1:1' });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/REDIS_URL: cannot reach Redis at redis:\/\/127.0.0.1:1/);
  });
});
