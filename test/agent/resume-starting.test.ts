import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, createTempDir, type TestDatabase } from '../support/db.js';
import { endTurn } from '../support/anthropic/script.js';
import { startEngine, waitFor, type EngineHarness } from './helpers.js';

// The reconciler's resumeLiveRuns came between startRun's creating a run and appending its brief
// (CI, test/agent/reconcile.test.ts): the turn it scheduled wrote message 0 first, and startRun
// failed on the unique (run, seq) index. A queued run without its brief is still being started.
let db: TestDatabase;
let tmp: { dir: string; remove(): Promise<void> };
let h: EngineHarness;

beforeAll(async () => {
  db = await createTestDatabase('pglite');
  tmp = await createTempDir('ks-starting-');
  h = await startEngine({ store: db.store, dataDir: tmp.dir, server: { fallback: () => endTurn('done') } });
});
afterAll(async () => {
  await h?.close();
  await db.dispose();
  await tmp.remove();
});

describe('resuming live runs', () => {
  it('leaves a run that is still being started to startRun, and resumes it once its brief is there', { timeout: 60_000 }, async () => {
    const run = await db.store.runs.create({
      task: 'cpu_softmax', owner: 'U1', origin: 'api', slackChannel: null, slackThreadTs: null, arch: null, model: 'claude-test',
      autonomous: false, target: 1.5, questionTimeoutSeconds: 600, budgetEvals: 1, budgetSteps: 2, budgetUsd: 1, budgetSeconds: 600, state: {},
    });
    expect(run.status).toBe('queued');
    expect(await h.engine.resumeLiveRuns()).not.toContain(run.id);
    expect(await db.store.transcript.messages(run.id)).toEqual([]);

    await db.store.transcript.appendMessage(run.id, 0, 'user', [{ type: 'text', text: 'Task: cpu_softmax' }]);
    expect(await h.engine.resumeLiveRuns()).toContain(run.id);
    await waitFor('the model to be asked', async () => h.server.requests.length, (n) => n >= 1, 30_000);
  });
});
