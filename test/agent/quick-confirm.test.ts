import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { summaryLines } from '../../src/agent/index.js';
import type { RunSummary } from '../../src/agent/index.js';
import { createTestDatabase, createTempDir, type TestDatabase } from '../support/db.js';
import { reply, toolUse } from '../support/anthropic/script.js';
import { FAST } from './fixtures/kernels.js';
import { startEngine, waitFor, type EngineHarness } from './helpers.js';

// Issue 14: a run on the quick subset picks its best on a few scenarios; its final summary
// evaluates that kernel on every scenario before calling it correct (real harness, cpu task).
let db: TestDatabase;
let tmp: { dir: string; remove(): Promise<void> };
let h: EngineHarness;

beforeAll(async () => {
  db = await createTestDatabase('pglite');
  tmp = await createTempDir('ks-confirm-');
});
afterAll(async () => {
  await h?.close();
  await db.dispose();
  await tmp.remove();
});

describe('a quick run', () => {
  it('confirms its best on the full set in the final summary', { timeout: 400_000 }, async () => {
    h = await startEngine({
      store: db.store,
      dataDir: tmp.dir,
      server: { script: [reply(toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: FAST }), toolUse('evaluate', {}))] },
    });
    const run = await h.engine.startRun({ task: 'cpu_softmax', owner: 'alice', origin: 'api', scenarios: 'quick', target: 100, autonomous: true, budgets: { evals: 1 } });
    await waitFor('the run to finish', () => db.store.runs.get(run.id), (r) => r?.status === 'finished', 350_000);
    const finished = await waitFor('the summary', async () => h.events.find((e) => e.event === 'runFinished'), (e) => e !== undefined, 60_000);
    const summary = (finished!.data as unknown as { summary: RunSummary }).summary;
    expect(summary.best).toMatchObject({ evaluationSeq: 1, scenarioSet: { evaluated: 3, total: 11 } });
    expect(summary.best!.confirmation).toMatchObject({ status: 'ok', correct: true, scenarios: 11 });
    expect(summary.best!.confirmation!.speedupVsBaseline).toBeGreaterThan(1);
    expect(summaryLines(run.id, summary).join('\n')).toMatch(/chosen on 3 of 11 scenarios; on all 11: correct, [0-9.]+x vs baseline/);
    // Kept with the run: a summary shown again says the same without evaluating again.
    expect(((await db.store.runs.get(run.id))!.state as { confirmation?: unknown }).confirmation).toMatchObject({ correct: true });
    // Outside the run's budget: still one evaluation used.
    expect((await db.store.runs.get(run.id))!.evalsUsed).toBe(1);
  });
});
