import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentEngine, createBankQuestionSource, createLocalTurnScheduler, createRedisWorkerAvailability } from '../../src/agent/index.js';
import { listingOf } from '../../src/cli/commands/runs.js';
import { describeRun } from '../../src/agent/run-view.js';
import { silentLogger } from '../../src/core/logger.js';
import { createInProcessDispatcher } from '../../src/queue/index.js';
import { startHeartbeat } from '../../src/queue/heartbeat.js';
import { endTurn, reply, toolUse } from '../support/anthropic/script.js';
import { startFakeAnthropic, type FakeAnthropic } from '../support/anthropic/server.js';
import { removePrefix } from '../queue/support.js';
import { useServiceFixture } from '../support/fixture.js';
import { CORRECT } from './fixtures/kernels.js';
import { recordingReporter, testConfig, waitFor, type ReporterEvent } from './helpers.js';

// A run whose evaluation no gpu-worker can take says so, from the workers' heartbeats in Redis.
const fx = useServiceFixture<{ close(): Promise<void> }>('pglite', 'ks-worker-wait-');
const prefix = `ks-test-${randomBytes(4).toString('hex')}`;
const connection = { host: '127.0.0.1', port: 6379 };
let redis: Redis;
let server: FakeAnthropic | undefined;

beforeAll(() => {
  redis = new Redis(connection);
});
afterAll(async () => {
  await server?.close();
  await removePrefix(prefix);
  redis.disconnect();
});

async function runOnce(): Promise<{ events: ReporterEvent[]; runId: string }> {
  await server?.close();
  server = await startFakeAnthropic({
    script: [reply(toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: CORRECT }), toolUse('evaluate', { scenarios: 'quick' }))],
    fallback: () => endTurn('done'),
  });
  const config = testConfig(fx.dataDir, server.url);
  const events: ReporterEvent[] = [];
  const scheduler = createLocalTurnScheduler({ logger: silentLogger });
  const dispatcher = createInProcessDispatcher(config, { env: { PATH: process.env.PATH } });
  const workers = createRedisWorkerAvailability(connection, prefix);
  const engine = createAgentEngine({ config, store: fx.db.store, dispatcher, scheduler, questions: createBankQuestionSource({ store: fx.db.store }), reporter: recordingReporter(events), workers });
  scheduler.attach(engine);
  fx.service = { close: async () => (scheduler.close(), await engine.close(), await dispatcher.close(), await workers.close()) };
  const run = await engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true, scenarios: 'quick', budgets: { evals: 1 } });
  await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'finished', 120_000);
  await scheduler.idle(run.id);
  return { events, runId: run.id };
}

const warnings = (events: ReporterEvent[]) => events.filter((e) => e.event === 'error').map((e) => (e.data as unknown as { message: string; fatal: boolean }));

describe('waiting for a gpu-worker', () => {
  it('says none is attached, then that all are busy, and nothing when one is free; the note clears when the job returns', { timeout: 300_000 }, async () => {
    const none = await runOnce();
    expect(warnings(none.events)).toEqual([{ message: 'The evaluation is waiting for a gpu-worker (cpu): none attached; it starts when one is free.', fatal: false, run: expect.anything() }]);
    const shown = none.events.find((e) => e.event === 'statusChanged' && e.data.run.waitingForWorker);
    expect(shown!.data.run.waitingForWorker).toBe('waiting for a gpu-worker (cpu): none attached');
    expect(listingOf(shown!.data.run).waitingFor).toBe('waiting for a gpu-worker (cpu): none attached');
    const after = (await fx.db.store.runs.get(none.runId))!;
    expect(describeRun(after).waitingForWorker).toBeNull();

    const slot = (jobId: string | null) => ({ gpuIndex: 0, gpuName: 'H100', jobId });
    const state = (jobId: string | null) => ({ id: 'w1', host: 'gpu-1', pid: 1, arch: 'cpu', queues: ['eval-cpu', 'gpu-bash-cpu'], slots: [slot(jobId)], driver: null, harnessVersion: null, startedAt: new Date().toISOString() });
    const busy = startHeartbeat(redis, prefix, () => state('eval:other:1'));
    await waitFor('the heartbeat', () => redis.keys(`${prefix}:*`), (k) => k.length > 0);
    const allBusy = await runOnce();
    expect(warnings(allBusy.events).map((w) => w.message)).toEqual(['The evaluation is waiting for a gpu-worker (cpu): all 1 attached are busy; it starts when one is free.']);
    await busy.stop();

    const idle = startHeartbeat(redis, prefix, () => state(null));
    await waitFor('the heartbeat', () => redis.keys(`${prefix}:*`), (k) => k.length > 0);
    const free = await runOnce();
    expect(warnings(free.events)).toEqual([]);
    await idle.stop();
  });
});
