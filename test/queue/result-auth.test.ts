import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvaluationOutcome, EvaluationProgress } from '../../src/harness/evaluation.js';
import { jobIdFor } from '../../src/queue/catalog.js';
import { createBullmqDispatcher } from '../../src/queue/bullmq-dispatcher.js';
import { redisOptionsFromUrl } from '../../src/queue/connection.js';
import type { EvaluationRequest } from '../../src/queue/dispatcher.js';
import { storedOutcome } from '../../src/agent/tools/evaluate-tool.js';
import { BACKENDS, createTempDir, createTestDatabase, type TestDatabase } from '../support/db.js';
import { runKernelseek } from '../support/cli.js';
import { newRunInput } from '../support/factories.js';
import { BASELINE, countLogLines, FIXTURES, newPrefix, REDIS_URL, removePrefix, slowBaseline, startWorker, TEST_RESULT_KEY, TEST_RESULT_SECRET, workerEnv, type WorkerProcess, EVAL_CPU } from './support.js';

/**
 * The attack of issue 12, performed: whoever can write to Redis (gpu_bash on a worker host read
 * REDIS_URL from the worker's environment) answers an evaluation with a forged "ok, correct, 7.50x"
 * for a kernel that writes zeros. Each test checks that BullMQ itself serves the forgery (so the
 * attack is real), that the dispatcher refuses it with a clear message, and that the candidate is
 * then evaluated for real by the harness.
 */

const SMALL = { peers: false, baseline: false } as const;

/** What the attacker wants recorded: ok, correct, 7.50x, no harness run. */
function forgedOutcome(jobId: string): EvaluationOutcome {
  return {
    status: 'ok',
    wallSeconds: 1.2,
    jobId,
    worker: 'gpu-host-1/0',
    gpu: null,
    result: {
      schema: 'kernelseek.eval/1',
      task: 'cpu_softmax',
      status: 'ok',
      correct: true,
      summary: { speedup_vs_baseline_geomean: 7.5 },
      scenarios: [{ id: 'r7-c33', correct: true, status: 'ok', time_ms: 0.001 }],
      compile: { ok: true, log: '' },
      messages: [],
    },
  } as unknown as EvaluationOutcome;
}

describe('results through Redis are sealed: a forged one is refused and the candidate evaluated for real', () => {
  const prefix = newPrefix('auth');
  const connection = redisOptionsFromUrl(REDIS_URL);
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  let env: Record<string, string>;
  let worker: WorkerProcess | undefined;
  let redis: Redis;
  let dispatcher: ReturnType<typeof createBullmqDispatcher>;
  let zeros: string;
  let baseline: string;
  const logLines: string[] = [];
  const request = (over: Partial<EvaluationRequest>): EvaluationRequest => ({ task: 'cpu_softmax', source: zeros, fileName: 'kernel.cpp', scenarios: 'r7-c33', arch: 'cpu', options: SMALL, ...over });

  const startRealWorker = async () => {
    worker ??= startWorker('cli', env);
    await worker.waitFor(/gpu-worker .* ready: eval-cpu, gpu-bash-cpu/);
  };
  /** A completed job written straight into Redis, as the attacker did: BullMQ takes it for its own. */
  const plantCompleted = async (queueName: string, jobId: string, name: string, data: unknown, returnvalue: unknown) => {
    const now = Date.now();
    await redis.hset(`${prefix}:${queueName}:${jobId}`, {
      name,
      data: JSON.stringify(data),
      opts: JSON.stringify({ attempts: 2 }),
      timestamp: now,
      processedOn: now,
      finishedOn: now,
      atm: 1,
      returnvalue: JSON.stringify(returnvalue),
    });
    await redis.zadd(`${prefix}:${queueName}:completed`, now, jobId);
  };
  /** What BullMQ hands anyone who waits on the job: the old dispatcher took exactly this. */
  const unsealedView = async (queueName: string, jobId: string) => {
    const job = await dispatcher.client.queue(queueName).getJob(jobId);
    return job?.waitUntilFinished(await dispatcher.client.events(queueName), 5000);
  };
  const evaluate = async (req: EvaluationRequest, onProgress?: (p: EvaluationProgress) => void) => {
    const progress: EvaluationProgress[] = [];
    const outcome = await dispatcher.evaluate(req, { onProgress: (p) => (progress.push(p), onProgress?.(p)) });
    return { outcome, refusals: progress.filter((p) => p.phase === 'refused').map((p) => p.message ?? '') };
  };
  const speedup = (o: EvaluationOutcome) => (o.status === 'harness_error' ? undefined : o.result.summary.speedup_vs_baseline_geomean);

  beforeAll(async () => {
    tmp = await createTempDir('ks-auth-');
    env = workerEnv(prefix, tmp.dir);
    zeros = await readFile(path.join(FIXTURES, 'zeros.cpp'), 'utf8');
    baseline = await readFile(BASELINE, 'utf8');
    redis = new Redis(REDIS_URL);
    const logger = pino({ level: 'warn' }, new Writable({ write: (chunk: Buffer, _e, done) => (logLines.push(chunk.toString()), done()) }));
    dispatcher = createBullmqDispatcher({ connection, prefix, resultKey: TEST_RESULT_KEY, logger });
  });
  afterAll(async () => {
    await dispatcher?.close();
    await worker?.stop('SIGTERM');
    redis?.disconnect();
    await removePrefix(prefix);
    await tmp?.remove();
  });

  it('a rogue worker that takes the real job while it waits and completes it with a forged value', async () => {
    const jobId = 'eval:ks-auth:1';
    let forgedServed = 0;
    // Anyone with REDIS_URL can run a BullMQ worker on the queue: it answers the first job and leaves.
    const rogue: Worker = new Worker(
      EVAL_CPU,
      async (job) => {
        forgedServed++;
        void rogue.close();
        return forgedOutcome(String(job.id));
      },
      { connection, prefix },
    );
    await rogue.waitUntilReady();
    const { outcome, refusals } = await evaluate(request({ runId: 'ks-auth', seq: 1 }), (p) => {
      // The real worker comes up only after the forgery: the refusal alone makes it evaluate.
      if (p.phase === 'refused') void startRealWorker();
    });
    await rogue.close();
    expect(forgedServed).toBe(1);
    expect(refusals).toEqual([`The result of job ${jobId} on ${EVAL_CPU} was refused: it carries no seal: no KernelSeek worker produced it. The work is queued again, to be done for real.`]);
    expect(logLines.some((l) => l.includes('"msg":"result refused"') && l.includes(jobId))).toBe(true);
    // The harness's verdict on a kernel that writes zeros, not the forgery's.
    expect(outcome.status).toBe('incorrect');
    expect(outcome.worker).toMatch(/\/cpu$/);
    expect(speedup(outcome)).not.toBe(7.5);
    expect(outcome.refused).toEqual(refusals);
    if (outcome.status !== 'harness_error') expect(outcome.result.messages.at(-1)).toMatch(/^KernelSeek refused 1 result offered for job eval:ks-auth:1 before this one/);
    expect(countLogLines(worker!.output(), 'evaluation started', jobId)).toBe(1);
  }, 120_000);

  it('a completed job planted under the next id before the dispatcher enqueues (BullMQ would return it)', async () => {
    await startRealWorker();
    const req = request({ runId: 'ks-auth', seq: 2 });
    const jobId = 'eval:ks-auth:2';
    // The attacker knows the candidate and the next number: the planted job carries this very payload.
    await plantCompleted(EVAL_CPU, jobId, 'evaluate', await dispatcher.payloadFor(req), forgedOutcome(jobId));
    expect(await unsealedView(EVAL_CPU, jobId)).toMatchObject({ status: 'ok', result: { summary: { speedup_vs_baseline_geomean: 7.5 } } });

    const { outcome, refusals } = await evaluate(req);
    expect(refusals).toEqual([`The result of job ${jobId} on ${EVAL_CPU} was refused: it carries no seal: no KernelSeek worker produced it. The work is queued again, to be done for real.`]);
    expect(outcome.status).toBe('incorrect');
    expect(speedup(outcome)).not.toBe(7.5);
    expect(countLogLines(worker!.output(), 'evaluation started', jobId)).toBe(1);
  }, 120_000);

  it.each(BACKENDS)('the evaluations row (%s) holds the harness\'s figure and the refusal, not the planted 7.50x', async (backend) => {
    await startRealWorker();
    const database: TestDatabase = await createTestDatabase(backend);
    try {
      const { store } = database;
      const run = await store.runs.create(newRunInput());
      const jobId = `eval:${run.id}:1`;
      // As the evaluate tool does: the pending row first, then the dispatcher, then the row completed.
      const pending = await store.evaluations.createPending({ runId: run.id, seq: 1, task: 'cpu_softmax', jobId, candidateHash: 'zeros', source: zeros, scenarios: 'r7-c33' });
      const req = request({ runId: run.id, seq: 1 });
      await plantCompleted(EVAL_CPU, jobId, 'evaluate', await dispatcher.payloadFor(req), forgedOutcome(jobId));
      const { outcome } = await evaluate(req);
      await store.evaluations.complete(pending.id, storedOutcome(outcome));
      const row = (await store.evaluations.get(pending.id))!;
      expect(row).toMatchObject({ status: 'incorrect', correct: false });
      expect(row.speedupVsBaseline).not.toBe(7.5);
      expect(row.worker).toMatch(/\/cpu$/);
      expect((row.result as { messages: string[] }).messages.at(-1)).toMatch(new RegExp(`^KernelSeek refused 1 result offered for job ${jobId} before this one.*it carries no seal`));
    } finally {
      await database.dispose();
    }
  }, 120_000);

  it('a genuine result rewritten after completion, and genuine results replayed for another job and for another candidate', async () => {
    await startRealWorker();
    const first = await evaluate(request({ source: baseline, runId: 'ks-auth', seq: 3 }));
    expect(first).toMatchObject({ outcome: { status: 'ok' }, refusals: [] });
    expect(first.outcome.refused).toBeUndefined();
    const genuine = JSON.parse((await redis.hget(`${prefix}:${EVAL_CPU}:eval:ks-auth:3`, 'returnvalue'))!) as EvaluationOutcome & { seal: unknown };
    expect(genuine.seal).toMatchObject({ jobId: 'eval:ks-auth:3', kind: 'evaluate' });

    // Rewritten in place, seal kept: a re-executed tool call (same run and number) finds it.
    const rewritten = structuredClone(genuine) as typeof genuine & { result: { summary: { speedup_vs_baseline_geomean: number } } };
    rewritten.result.summary.speedup_vs_baseline_geomean = 7.5;
    await redis.hset(`${prefix}:${EVAL_CPU}:eval:ks-auth:3`, 'returnvalue', JSON.stringify(rewritten));
    expect(await unsealedView(EVAL_CPU, 'eval:ks-auth:3')).toMatchObject({ result: { summary: { speedup_vs_baseline_geomean: 7.5 } } });
    const again = await evaluate(request({ source: baseline, runId: 'ks-auth', seq: 3 }));
    expect(again.refusals).toEqual([`The result of job eval:ks-auth:3 on ${EVAL_CPU} was refused: its seal does not match its content: it was changed after a worker sealed it, or forged. The work is queued again, to be done for real.`]);
    expect(again.outcome.status).toBe('ok');
    expect(speedup(again.outcome)).not.toBe(7.5);
    expect(countLogLines(worker!.output(), 'evaluation started', 'eval:ks-auth:3')).toBe(2);

    // The baseline's genuine sealed result, planted as the zero kernel's next job.
    await plantCompleted(EVAL_CPU, 'eval:ks-auth:4', 'evaluate', await dispatcher.payloadFor(request({ runId: 'ks-auth', seq: 4 })), genuine);
    const replayed = await evaluate(request({ runId: 'ks-auth', seq: 4 }));
    expect(replayed.refusals).toEqual([`The result of job eval:ks-auth:4 on ${EVAL_CPU} was refused: it is the sealed result of job eval:ks-auth:3, not of eval:ks-auth:4. The work is queued again, to be done for real.`]);
    expect(replayed.outcome.status).toBe('incorrect');

    // Same job id, other candidate: the worker genuinely evaluated the baseline under eval:ks-auth:5,
    // then the job's data was rewritten to the zero kernel's payload.
    expect((await evaluate(request({ source: baseline, runId: 'ks-auth', seq: 5 }))).outcome.status).toBe('ok');
    await redis.hset(`${prefix}:${EVAL_CPU}:eval:ks-auth:5`, 'data', JSON.stringify(await dispatcher.payloadFor(request({ runId: 'ks-auth', seq: 5 }))));
    const swapped = await evaluate(request({ runId: 'ks-auth', seq: 5 }));
    expect(swapped.refusals).toEqual([
      `The result of job eval:ks-auth:5 on ${EVAL_CPU} was refused: it is the sealed result of other work under this job id (another candidate source, task, scenarios, options, run or evaluation number). The work is queued again, to be done for real.`,
    ]);
    expect(swapped.outcome.status).toBe('incorrect');
  }, 240_000);

  it('kernelseek eval --remote: a job planted under the ad-hoc id (a hash the attacker can compute) is refused, said on stderr', async () => {
    await startRealWorker();
    const file = path.join(FIXTURES, 'zeros.cpp');
    const payload = await dispatcher.payloadFor({ task: 'cpu_softmax', source: zeros, fileName: 'kernel.cpp', scenarios: 'r7-c33', arch: 'cpu', device: 'cpu', options: SMALL });
    const jobId = jobIdFor('evaluate', payload);
    await plantCompleted(EVAL_CPU, jobId, 'evaluate', payload, forgedOutcome(jobId));
    const cliEnv = { REDIS_URL, KERNELSEEK_QUEUE_PREFIX: prefix, KERNELSEEK_DATA_DIR: tmp.dir, KERNELSEEK_RESULT_KEY: TEST_RESULT_SECRET };
    const r = await runKernelseek(['eval', 'cpu_softmax', file, '--remote', '--scenarios', 'r7-c33', '--no-peers', '--no-baseline'], cliEnv);
    expect(r.stderr).toContain(`The result of job ${jobId} on ${EVAL_CPU} was refused: it carries no seal: no KernelSeek worker produced it. The work is queued again, to be done for real.`);
    expect(r.stdout).toMatch(/r7-c33\s+incorrect/);
    expect(r.code).toBe(1);
  }, 120_000);

  it('a job planted under the next id with other work in it is refused before anyone waits on it', async () => {
    await startRealWorker();
    const jobId = 'eval:ks-auth:6';
    await plantCompleted(EVAL_CPU, jobId, 'evaluate', await dispatcher.payloadFor(request({ source: baseline, runId: 'ks-auth', seq: 6 })), forgedOutcome(jobId));
    const { outcome, refusals } = await evaluate(request({ runId: 'ks-auth', seq: 6 }));
    expect(refusals).toEqual([
      `The result of job ${jobId} on ${EVAL_CPU} was refused: the job already under this id carries other work (another candidate source, task, scenarios, options or run), so this dispatcher did not enqueue it. The work is queued again, to be done for real.`,
    ]);
    expect(outcome.status).toBe('incorrect');
  }, 120_000);

  it('a forged completion event while the real job runs: refused, and the running job’s own result taken (not run twice)', async () => {
    await startRealWorker();
    const jobId = 'eval:ks-auth:7';
    const slow = await slowBaseline();
    let forged = false;
    const { outcome, refusals } = await evaluate(request({ source: slow, runId: 'ks-auth', seq: 7, options: { ...SMALL, seeds: 4 } }), (p) => {
      if (p.phase === 'compile' && !forged) {
        forged = true;
        void redis.xadd(`${prefix}:${EVAL_CPU}:events`, '*', 'event', 'completed', 'jobId', jobId, 'returnvalue', JSON.stringify(forgedOutcome(jobId)), 'prev', 'active');
      }
    });
    expect(forged).toBe(true);
    expect(refusals).toEqual([`The result of job ${jobId} on ${EVAL_CPU} was refused: it carries no seal: no KernelSeek worker produced it. A worker is running this job: its own result is awaited.`]);
    expect(outcome.status).toBe('ok');
    expect(speedup(outcome)).not.toBe(7.5);
    expect(countLogLines(worker!.output(), 'evaluation started', jobId)).toBe(1);
  }, 120_000);
});
