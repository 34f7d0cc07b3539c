import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentEngine, createBankQuestionSource, type TurnScheduler } from '../../src/agent/index.js';
import { REPO_ROOT } from '../../src/config/index.js';
import { createInProcessDispatcher } from '../../src/queue/index.js';
import { createTestDatabase, createTempDir, type TestDatabase } from '../support/db.js';
import { killAllSpawned, spawnNode, type Spawned } from '../support/processes.js';
import { endTurn, reply, toolResultTexts, toolUse } from '../support/anthropic/script.js';
import { startFakeAnthropic, type FakeAnthropic, type RecordedRequest, type Reply } from '../support/anthropic/server.js';
import { CORRECT } from './fixtures/kernels.js';
import { expectConsistentConversation, startEngine, testConfig, waitFor, type EngineHarness } from './helpers.js';

// Acceptance (issue 5): a worker killed mid-run resumes from the store and the model sees no step
// duplicated or missing. Workers are real processes killed with SIGKILL: once during an evaluation
// (the call is re-executed under its reserved number: one evaluation, one result), once while
// waiting for the model (the request is sent again, identical).
let db: TestDatabase;
let tmp: { dir: string; remove(): Promise<void> };
let server: FakeAnthropic;
let h: EngineHarness | undefined;
const children: Spawned[] = [];

beforeAll(async () => {
  db = await createTestDatabase('postgres');
  tmp = await createTempDir('ks-resume-');
});
afterAll(async () => {
  for (const c of children) await c.kill('SIGKILL');
  killAllSpawned();
  await h?.close();
  await server?.close();
  await db.dispose();
  await tmp.remove();
});

/**
 * A worker process of its own group (node with tsx loaded in-process: no wrapper process that a
 * SIGKILL would orphan its child from), with the parent watchdog: it cannot outlive this test.
 */
function spawnWorker(): Spawned {
  const child = spawnNode(path.join(REPO_ROOT, 'test', 'agent', 'workers', 'turn-worker.ts'), [], {
    env: { ...process.env, KS_TEST_DB_URL: db.url, KS_TEST_DATA_DIR: tmp.dir, KS_TEST_BASE_URL: server.url },
  });
  children.push(child);
  return child;
}

async function kill(child: Spawned): Promise<void> {
  await child.kill('SIGKILL');
}

const assistants = (req: RecordedRequest) => req.body.messages.filter((m) => m.role === 'assistant').length;

describe('a worker killed mid-run', () => {
  it('resumes without the model seeing a step twice or a step missing', { timeout: 300_000 }, async () => {
    let hangSecondCall = true;
    server = await startFakeAnthropic({
      fallback: (req): Reply | Promise<Reply> => {
        switch (assistants(req)) {
          case 0:
            return reply(toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: CORRECT }), toolUse('evaluate', {}));
          case 1:
            if (hangSecondCall) {
              hangSecondCall = false;
              return new Promise<Reply>(() => {}); // the worker dies waiting for this answer
            }
            expect(toolResultTexts(req)[1]).toMatch(/^Evaluation #1 .*: ok; correct on 3\/3/);
            return reply(toolUse('bash', { command: 'git log --oneline | wc -l' }));
          default:
            return endTurn('done');
        }
      },
    });
    // Start the run without working on it here: the workers do.
    const config = testConfig(tmp.dir, server.url);
    const idle: TurnScheduler = { schedule: async () => {}, wake: async () => {} };
    const starter = createAgentEngine({ config, store: db.store, dispatcher: createInProcessDispatcher(config, { env: {} }), scheduler: idle, questions: createBankQuestionSource({ store: db.store }) });
    const run = await starter.startRun({ task: 'cpu_softmax', owner: 'k', origin: 'api', scenarios: 'quick', autonomous: true, budgets: { steps: 3 } });

    // Worker A dies while the harness evaluates the candidate.
    const a = spawnWorker();
    await waitFor('the evaluation to start', () => db.store.evaluations.forRun(run.id), (e) => e.length === 1 && e[0]!.status === 'pending', 120_000);
    await kill(a);
    const callsAfterA = await db.store.transcript.toolCalls(run.id);
    expect(callsAfterA.map((c) => [c.name, c.finishedAt !== null])).toEqual([
      ['str_replace_based_edit_tool', true],
      ['evaluate', false],
    ]);

    // Worker B re-executes the evaluation under the same number, then dies waiting for the model.
    const b = spawnWorker();
    await waitFor('the second model call', async () => server.requests.length, (n) => n === 2, 180_000);
    await kill(b);

    // This process takes over, as a restarted worker would.
    h = await startEngine({ store: db.store, dataDir: tmp.dir, server: {} });
    await h.server.close();
    const resumed = createAgentEngine({
      config,
      store: db.store,
      dispatcher: h.dispatcher,
      scheduler: h.scheduler,
      questions: createBankQuestionSource({ store: db.store }),
      retryPolicy: { baseDelayMs: 20, maxDelayMs: 200 },
    });
    h.scheduler.attach(resumed);
    await resumed.resumeLiveRuns();
    const done = await waitFor('the run to finish', () => db.store.runs.get(run.id), (r) => r?.status === 'finished', 120_000);
    expect(done).toMatchObject({ endReason: 'budget_steps', evalsUsed: 1, stepsUsed: 3 });

    // The model's view: the hung request was sent again identically, and the conversation is whole.
    expect(server.requests).toHaveLength(4);
    expect(server.requests[2]!.body.messages).toEqual(server.requests[1]!.body.messages);
    expectConsistentConversation(server.requests.filter((_, i) => i !== 1));
    // One evaluation, under its reserved number, and every tool call answered once.
    const evaluations = await db.store.evaluations.forRun(run.id);
    expect(evaluations.map((e) => [e.seq, e.status, e.jobId])).toEqual([[1, 'ok', `eval:${run.id}:1`]]);
    const calls = await db.store.transcript.toolCalls(run.id);
    expect(calls.map((c) => c.name)).toEqual(['str_replace_based_edit_tool', 'evaluate', 'bash']);
    expect(calls.every((c) => c.finishedAt !== null && !c.isError)).toBe(true);
    // The step whose answer never came is in the trace, without a response.
    const steps = await db.store.transcript.steps(run.id);
    expect(steps.map((s) => s.response !== null)).toEqual([true, false, true, true]);
  });
});
