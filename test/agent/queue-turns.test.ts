import { randomBytes } from 'node:crypto';
import type { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentEngine, createBankQuestionSource, createQueueTurnScheduler, startAgentTurnWorker } from '../../src/agent/index.js';
import type { Config } from '../../src/config/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { createInProcessDispatcher, createQueueClient, redisOptionsFromUrl, type QueueClient } from '../../src/queue/index.js';
import { createTestDatabase, createTempDir, type TestDatabase } from '../support/db.js';
import { endTurn, reply, toolUse, userTexts } from '../support/anthropic/script.js';
import { startFakeAnthropic, type FakeAnthropic } from '../support/anthropic/server.js';
import { expectConsistentConversation, testConfig, waitFor } from './helpers.js';

// Turns as BullMQ jobs on a real Redis (own prefix): the decision point's wait is a delayed job that
// a person's question promotes. PostgreSQL, as `serve` uses.
let db: TestDatabase;
let tmp: { dir: string; remove(): Promise<void> };
let server: FakeAnthropic;
let client: QueueClient;
let worker: Worker;
const prefix = `ks-test-${randomBytes(4).toString('hex')}`;
const connection = redisOptionsFromUrl('redis://127.0.0.1:6379');

beforeAll(async () => {
  db = await createTestDatabase('postgres');
  tmp = await createTempDir('ks-queue-turns-');
});
afterAll(async () => {
  await worker?.close();
  if (client) {
    await client.queue('agent-turn').obliterate({ force: true });
    await client.close();
  }
  await server?.close();
  await db.dispose();
  await tmp.remove();
});

/** An engine whose turns are jobs on the agent-turn queue, and a worker taking them. */
function startQueuedEngine(config: Config) {
  const engine = createAgentEngine({
    config,
    store: db.store,
    dispatcher: createInProcessDispatcher(config, { env: {} }),
    scheduler: createQueueTurnScheduler(client),
    questions: createBankQuestionSource({ store: db.store }),
  });
  worker = startAgentTurnWorker(engine, { connection, prefix, lockSeconds: 30, stalledCheckSeconds: 30, logger: silentLogger });
  return engine;
}

describe('agent turns on BullMQ', () => {
  it('runs turns as jobs, waits on a delayed job at a decision point, and a question promotes it', { timeout: 60_000 }, async () => {
    server = await startFakeAnthropic({
      script: [
        reply(toolUse('bash', { command: 'echo hello' })),
        endTurn('All done, I think.'),
        (req) => (expect(userTexts(req)).toContain('Question from U123: What did you not measure yet?'), endTurn('ok')),
      ],
    });
    const config = testConfig(tmp.dir, server.url, { KERNELSEEK_STEPS_PER_TURN: '1' });
    client = createQueueClient({ connection, prefix });
    const engine = startQueuedEngine(config);
    const run = await engine.startRun({ task: 'cpu_softmax', owner: 'U123', origin: 'slack', slack: { channel: 'C1', threadTs: '1.1' }, questionTimeoutSeconds: 3600, budgets: { steps: 3 } });
    await waitFor('the decision point', () => db.store.runs.get(run.id), (r) => r?.status === 'waiting');
    const queue = client.queue('agent-turn');
    await waitFor('the delayed turn', () => queue.getDelayed(), (jobs) => jobs.length === 1);
    const [delayed] = await queue.getDelayed();
    expect(delayed!.id).toMatch(new RegExp(`^turn:${run.id}:\\d+$`));
    expect(delayed!.opts.delay).toBeGreaterThan(3_500_000);

    await engine.submitQuestion(run.id, { text: 'What did you not measure yet?', author: 'U123', idempotencyKey: '1712.5' });
    const done = await waitFor('the run to finish', () => db.store.runs.get(run.id), (r) => r?.status === 'finished', 30_000);
    expect(done!.endReason).toBe('budget_steps');
    expect(server.requests).toHaveLength(3);
    expectConsistentConversation(server.requests);
    const completed = await queue.getCompleted();
    expect(completed.length).toBeGreaterThanOrEqual(3);
  });

  it('pauses a waiting run, takes a request for the bank while paused, and resumes at once', { timeout: 60_000 }, async () => {
    await worker.close();
    await server.close();
    server = await startFakeAnthropic({
      script: [endTurn('Nothing more to do.'), (req) => (expect(userTexts(req).join()).toMatch(/Question \(from the question bank\)/), endTurn('ok'))],
    });
    const config = testConfig(tmp.dir, server.url);
    const engine = startQueuedEngine(config);
    const run = await engine.startRun({ task: 'cpu_softmax', owner: 'U9', origin: 'api', questionTimeoutSeconds: 3600, budgets: { steps: 2 } });
    await waitFor('the decision point', () => db.store.runs.get(run.id), (r) => r?.status === 'waiting');
    expect((await engine.pauseRun(run.id)).status).toBe('paused');
    await engine.askFromBankNow(run.id);
    expect(server.requests).toHaveLength(1);
    await engine.resumeRun(run.id);
    const done = await waitFor('the run to finish', () => db.store.runs.get(run.id), (r) => r?.status === 'finished', 30_000);
    expect(done!.endReason).toBe('budget_steps');
    expect((await db.store.questions.forRun(run.id)).map((q) => [q.source, q.trigger])).toEqual([['bank', 'stopped']]);
  });
});
