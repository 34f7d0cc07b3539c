import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, createTempDir, type TestDatabase } from '../support/db.js';
import { endTurn, reply, toolResultTexts, toolUse } from '../support/anthropic/script.js';
import { FAST } from './fixtures/kernels.js';
import { startEngine, waitFor, type EngineHarness } from './helpers.js';

// Issue 14: "a new best only when it is better". Once a run has a best, every evaluation times it
// beside the candidate (the harness's --incumbent, in an executor of its own) and the engine decides
// on that paired comparison. The attack: resubmit the best with a comment changed, hoping noise
// lifts its figure above the best's own (an evaluation minutes earlier, on another machine state).
let db: TestDatabase;
let tmp: { dir: string; remove(): Promise<void> };
let h: EngineHarness;

beforeAll(async () => {
  db = await createTestDatabase('pglite');
  tmp = await createTempDir('ks-incumbent-');
});
afterAll(async () => {
  await h?.close();
  await db.dispose();
  await tmp.remove();
});

const write = (source: string) => toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: source });

describe('a run with a best', () => {
  it('times the best beside each later candidate, and the best resubmitted is not a new best', { timeout: 400_000 }, async () => {
    const results: string[] = [];
    h = await startEngine({
      store: db.store,
      dataDir: tmp.dir,
      server: {
        script: [
          reply(write(FAST), toolUse('evaluate', {})),
          (req) => {
            results.push(toolResultTexts(req)[1] ?? '');
            return reply(write(`// the same kernel, tidied\n${FAST}`), toolUse('evaluate', {}));
          },
          (req) => {
            results.push(toolResultTexts(req)[1] ?? '');
            return endTurn('done');
          },
        ],
      },
    });
    const run = await h.engine.startRun({ task: 'cpu_softmax', owner: 'alice', origin: 'api', scenarios: 'quick', target: 100, autonomous: true, budgets: { evals: 3 } });
    // Two evaluations, then the model reads the second's result and stops.
    await waitFor('the second result to reach the model', async () => results.length, (n) => n >= 2, 350_000);
    const done = await waitFor('the run to settle', () => db.store.runs.get(run.id), (r) => r != null && r.status !== 'running', 60_000);
    const evaluations = await db.store.evaluations.forRun(run.id);
    expect(evaluations.map((e) => [e.seq, e.status, e.correct])).toEqual([[1, 'ok', true], [2, 'ok', true]]);
    const [first, second] = evaluations as [(typeof evaluations)[number], (typeof evaluations)[number]];
    expect(done).toMatchObject({ bestEvaluationId: first.id });

    // The first had no best to be timed against; the second was timed beside the first's source.
    type Stored = { incumbent?: { timed: boolean }; summary: { verdict_vs_incumbent?: string; speedup_vs_incumbent_ci?: [number, number] } };
    expect((first.result as Stored).incumbent).toBeUndefined();
    const r2 = second.result as Stored;
    expect(r2.incumbent).toMatchObject({ timed: true });
    expect(r2.summary.verdict_vs_incumbent, `interval ${String(r2.summary.speedup_vs_incumbent_ci)}`).not.toBe('faster');
    expect(results[0]).toMatch(/This is the new best/);
    expect(results[1]).toMatch(/Against the run's best so far, timed beside it: [0-9.]+x, (not distinguishable from|slower than) it \(95 % interval/);
    expect(results[1]).not.toMatch(/This is the new best/);
    expect(h.events.filter((e) => e.event === 'newBest')).toHaveLength(1);
  });
});
