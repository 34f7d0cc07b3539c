import { randomBytes } from 'node:crypto';
import type { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentEngine, createBankQuestionSource, createQueueTurnScheduler, startAgentTurnWorker, startRunReconciler, type RunReconciler } from '../../src/agent/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { createInProcessDispatcher, createQueueClient, redisOptionsFromUrl, type QueueClient } from '../../src/queue/index.js';
import { createTestDatabase, createTempDir, type TestDatabase } from '../support/db.js';
import { endTurn, userTexts } from '../support/anthropic/script.js';
import { startFakeAnthropic, type FakeAnthropic } from '../support/anthropic/server.js';
import { removePrefix } from '../queue/support.js';
import { testConfig, waitFor } from './helpers.js';

// Redis loses its data while a run waits at a decision point (its delayed turn job is gone): a
// reply still wakes it, and its deadline still comes, with the worker stack running all along.
// The test deletes every key under its own prefix (never FLUSHALL: the Redis is shared).
let db: TestDatabase;
let tmp: { dir: string; remove(): Promise<void> };
let server: FakeAnthropic;
let client: QueueClient;
let worker: Worker | undefined;
let reconciler: RunReconciler | undefined;
const prefix = `ks-test-${randomBytes(4).toString('hex')}`;
const connection = redisOptionsFromUrl('redis://127.0.0.1:6379');

beforeAll(async () => {
  db = await createTestDatabase('postgres');
  tmp = await createTempDir('ks-reconcile-');
  client = createQueueClient({ connection, prefix });
});
afterAll(async () => {
  await reconciler?.close();
  await worker?.close();
  await client?.close();
  await removePrefix(prefix);
  await server?.close();
  await db.dispose();
  await tmp.remove();
});

describe('self-healing scheduling', () => {
  it('a run whose turn job vanished wakes on a reply and on its deadline, without a restart', { timeout: 90_000 }, async () => {
    const REPLY = 'What did you not measure yet?';
    server = await startFakeAnthropic({ fallback: () => endTurn('I am done.') });
    const config = testConfig(tmp.dir, server.url);
    const engine = createAgentEngine({
      config,
      store: db.store,
      dispatcher: createInProcessDispatcher(config, { env: {} }),
      scheduler: createQueueTurnScheduler(client),
      questions: createBankQuestionSource({ store: db.store }),
    });
    worker = startAgentTurnWorker(engine, { connection, prefix, lockSeconds: 30, stalledCheckSeconds: 30, logger: silentLogger });
    reconciler = await startRunReconciler(engine, client, { connection, prefix, everyMs: 1000, logger: silentLogger });

    const run = await engine.startRun({ task: 'cpu_softmax', owner: 'U1', origin: 'api', questionTimeoutSeconds: 600 });
    await waitFor('the first decision point', () => db.store.runs.get(run.id), (r) => r?.status === 'waiting');
    const turn = async () => Number(((await db.store.runs.get(run.id))!.state as { turn?: number }).turn ?? 0);
    const first = await client.queue('agent-turn').getJob(`turn:${run.id}:${await turn()}`);
    expect(first).toBeTruthy();

    // Redis loses everything: the delayed turn, the reconciler's scheduler, the queues' metadata.
    // The job is gone; the reconciler (every second) may already have made it again, as a new job.
    await removePrefix(prefix);
    const after = await client.queue('agent-turn').getJob(`turn:${run.id}:${await turn()}`);
    expect(after === undefined || after.timestamp > first!.timestamp).toBe(true);
    // A reply wakes it all the same.
    await engine.submitQuestion(run.id, { text: REPLY, author: 'U2', idempotencyKey: 'reply-1' });
    await waitFor('the reply to reach the model', async () => server.requests.length, (n) => n >= 2, 20_000);
    expect(userTexts(server.requests[1]!).join('\n')).toContain(`Question from U2: ${REPLY}`);
    await waitFor('the second decision point', () => db.store.runs.get(run.id), (r) => r?.status === 'waiting' && (r.state as { decision: unknown }).decision !== null);

    // The deadline, after another loss: the reconciler schedules the turn again and the bank asks on
    // time. A short deadline: the decision's deadline is moved to two seconds from now.
    const live = (await db.store.runs.get(run.id))!;
    const decision = (live.state as { decision: Record<string, unknown> }).decision;
    const deadline = new Date(Date.now() + 2000);
    await db.store.agentRuns.patchState(run.id, { decision: { ...decision, deadline: deadline.toISOString() } });
    await removePrefix(prefix);
    // The patch goes behind the engine's back: a reconcile that read the run just before it may
    // still schedule the turn at the old deadline (ten minutes on) after the loss above. Such a job
    // is lost again, as Redis would lose it; the one made from the patched state is due on time.
    const stale = async () => {
      const job = await client.queue('agent-turn').getJob(`turn:${run.id}:${await turn()}`);
      if (job && (await job.isDelayed()) && job.timestamp + (job.delay ?? 0) > deadline.getTime() + 60_000) await removePrefix(prefix);
    };
    await waitFor('the bank to ask at the deadline', async () => (await stale(), server.requests.length), (n) => n >= 3, 30_000);
    expect(Date.now()).toBeGreaterThanOrEqual(deadline.getTime());
    expect(userTexts(server.requests[2]!).some((t) => t.startsWith('Question (from the question bank)'))).toBe(true);
    await engine.stopRun(run.id);
  });
});
