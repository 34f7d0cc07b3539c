import { setTimeout as delay } from 'node:timers/promises';
import { QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullmqDispatcher } from '../../src/queue/bullmq-dispatcher.js';
import { redisOptionsFromUrl } from '../../src/queue/connection.js';
import { createTempDir } from '../support/db.js';
import { alive, countLogLines, newPrefix, slowBaseline, waitForLogLine, REDIS_URL, removePrefix, startWorker, TEST_RESULT_KEY, workerEnv, type WorkerProcess, EVAL_CPU } from './support.js';

// Two scenarios of a deliberately slow (but correct) kernel: long enough to be interrupted.
const SLOW_SCENARIOS = 'r64-c128,r7-c33';
const SMALL = { peers: false, baseline: false } as const;

function logTime(output: string, msg: string, jobId: string): number {
  const line = output.split('\n').find((l) => l.includes(`"msg":"${msg}"`) && l.includes(`"jobId":"${jobId}"`));
  if (!line) throw new Error(`no '${msg}' log line for ${jobId}`);
  return (JSON.parse(line) as { time: number }).time;
}

describe('workers that die or stop in the middle of an evaluation', () => {
  const prefix = newPrefix('recovery');
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  let env: Record<string, string>;
  let dispatcher: ReturnType<typeof createBullmqDispatcher>;
  let events: QueueEvents;
  let slow: string;
  const completed: string[] = [];
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    tmp = await createTempDir('ks-recovery-');
    env = workerEnv(prefix, tmp.dir);
    slow = await slowBaseline();
    dispatcher = createBullmqDispatcher({ connection: redisOptionsFromUrl(REDIS_URL), prefix, resultKey: TEST_RESULT_KEY });
    events = new QueueEvents(EVAL_CPU, { connection: redisOptionsFromUrl(REDIS_URL), prefix });
    events.on('completed', ({ jobId }) => completed.push(jobId));
    await events.waitUntilReady();
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await events?.close();
    await dispatcher?.close();
    await removePrefix(prefix);
    await tmp?.remove();
  });

  it('SIGKILL: the harness dies with its worker, and the job completes on another worker exactly once', async () => {
    const crashing = startWorker('crash-mid-evaluation', env);
    workers.push(crashing);
    await crashing.waitFor(/crash-mid-evaluation .* ready/);
    const jobId = 'eval:ks-crash:1';
    const pending = dispatcher.evaluate({ task: 'cpu_softmax', source: slow, fileName: 'kernel.cpp', scenarios: SLOW_SCENARIOS, runId: 'ks-crash', seq: 1, options: SMALL });
    await crashing.waitFor(/"msg":"harness started"/);
    const rescuer = startWorker('cli', env);
    workers.push(rescuer);

    const [, pid] = await crashing.waitFor(/crashing now: harness pid (\d+)/);
    expect(await crashing.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const crashedAt = Date.now();
    // The watchdog in the harness's process group sees the worker's pipe close and kills the group.
    await delay(1000);
    expect(alive(Number(pid))).toBe(false);

    const outcome = await pending;
    expect(outcome.status).toBe('ok');
    if (outcome.status === 'harness_error') return;
    expect(outcome.result.correct).toBe(true);
    expect(outcome.result.scenarios.map((s) => s.id).sort()).toEqual(['r64-c128', 'r7-c33']);

    await waitForLogLine([rescuer], 'evaluation finished', jobId);
    const out = rescuer.output();
    expect(countLogLines(out, 'evaluation started', jobId)).toBe(1);
    expect(countLogLines(out, 'evaluation finished', jobId)).toBe(1);
    expect(countLogLines(crashing.output(), 'evaluation finished', jobId)).toBe(0);
    // Picked up within the lock (4 s) plus the stalled check (2 s), with room for a loaded machine.
    expect(logTime(out, 'evaluation started', jobId) - crashedAt).toBeLessThan(15_000);
    await delay(500);
    expect(completed.filter((id) => id === jobId)).toHaveLength(1);
    const job = await dispatcher.client.queue(EVAL_CPU).getJob(jobId);
    expect(job?.stalledCounter).toBe(1);
    expect(await job?.getState()).toBe('completed');
  }, 180_000);

  it('SIGTERM: an idle worker exits at once; a busy one hands its job back after the grace period', async () => {
    const idle = workers.at(-1)!;
    const stopAsked = Date.now();
    await idle.stop('SIGTERM');
    expect(await idle.exited).toEqual({ code: 0, signal: null });
    expect(idle.output()).toContain('gpu-worker stopped');
    expect(Date.now() - stopAsked).toBeLessThan(10_000);

    const stopping = startWorker('cli', env, ['--grace', '1s']);
    workers.push(stopping);
    await stopping.waitFor(/ready/);
    const jobId = 'eval:ks-term:1';
    const pending = dispatcher.evaluate({ task: 'cpu_softmax', source: slow, fileName: 'kernel.cpp', scenarios: SLOW_SCENARIOS, runId: 'ks-term', seq: 1, options: SMALL });
    await stopping.waitFor(/"msg":"harness started"/);
    stopping.child.kill('SIGTERM');
    expect(await stopping.exited).toEqual({ code: 0, signal: null });
    expect(stopping.output()).toContain('handed back to the queue');
    const job = await dispatcher.client.queue(EVAL_CPU).getJob(jobId);
    expect(await job?.getState()).toBe('waiting');
    expect(job?.failedReason).toBeFalsy();

    const next = startWorker('cli', env);
    workers.push(next);
    const outcome = await pending;
    expect(outcome.status).toBe('ok');
    // Any live worker may take the handed-back job (an earlier test's worker can be faster than
    // `next` on a loaded machine); what matters is that exactly one finishes it, and not the one stopped.
    await waitForLogLine(workers.filter((w) => w !== stopping), 'evaluation finished', jobId);
    const finishedBy = workers.filter((w) => countLogLines(w.output(), 'evaluation finished', jobId) > 0);
    expect(finishedBy).toHaveLength(1);
    expect(countLogLines(finishedBy[0]!.output(), 'evaluation finished', jobId)).toBe(1);
    expect(countLogLines(stopping.output(), 'evaluation finished', jobId)).toBe(0);
  }, 180_000);
});
