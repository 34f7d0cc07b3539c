import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { attributeGains } from '../../src/questions/index.js';
import { createTestDatabase, createTempDir, type TestDatabase } from '../support/db.js';
import { endTurn, reply, toolResultTexts, toolUse, userTexts } from '../support/anthropic/script.js';
import { startEngine, waitFor, type EngineHarness } from './helpers.js';

// Issue 14's attack on a plain comparison: the model resubmits the baseline with only a comment
// changed. With the real harness on the cpu task, noise moves its figure around 1.0; the run must
// record no new best, and the question asked in between no gain for the bank to learn from.
const BASELINE = readFileSync(path.join(REPO_ROOT, 'kernels', 'cpu_softmax', 'baseline.cpp'), 'utf8');
const commented = (note: string) => `// ${note}\n${BASELINE}`;

let db: TestDatabase;
let tmp: { dir: string; remove(): Promise<void> };
let h: EngineHarness;

beforeAll(async () => {
  db = await createTestDatabase('pglite');
  tmp = await createTempDir('ks-noise-');
});
afterAll(async () => {
  await h?.close();
  await db.dispose();
  await tmp.remove();
});

const write = (source: string) => toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: source });

describe('a scripted run that resubmits the baseline with only a comment changed', () => {
  it('records no new best and no question gain', { timeout: 400_000 }, async () => {
    const results: string[] = [];
    h = await startEngine({
      store: db.store,
      dataDir: tmp.dir,
      env: { KERNELSEEK_PLATEAU_EVALS: '1' },
      server: {
        script: [
          reply(write(commented('tidied')), toolUse('evaluate', {})),
          // plateau after #1 (no new best): the bank asks at once (autonomous).
          (req) => {
            results.push(toolResultTexts(req)[1] ?? '');
            expect(userTexts(req).some((t) => t.startsWith('Question (from the question bank)'))).toBe(true);
            return reply(write(commented('tidied again, as the question suggested')), toolUse('evaluate', {}));
          },
          () => endTurn('never sent: the evaluation budget is spent'),
        ],
      },
    });
    const run = await h.engine.startRun({ task: 'cpu_softmax', owner: 'alice', origin: 'api', scenarios: 'quick', target: 2, autonomous: true, budgets: { evals: 2 } });
    const done = await waitFor('the run to finish', () => db.store.runs.get(run.id), (r) => r?.status === 'finished' || r?.status === 'failed', 350_000);
    expect(done).toMatchObject({ status: 'finished', endReason: 'budget_evals', evalsUsed: 2, bestEvaluationId: null, bestSpeedup: null });

    const evaluations = await db.store.evaluations.forRun(run.id);
    expect(evaluations.map((e) => [e.seq, e.status, e.correct])).toEqual([[1, 'ok', true], [2, 'ok', true]]);
    for (const e of evaluations) {
      const summary = (e.result as { summary: { verdict_vs_baseline: string; speedup_vs_baseline_ci: [number, number] } }).summary;
      expect(summary.verdict_vs_baseline, `evaluation #${e.seq}: ${e.speedupVsBaseline}x`).not.toBe('faster');
    }
    expect(results[0]).toMatch(/Against the baseline: (not distinguishable from|slower than) the baseline \(95 % interval/);
    expect(results[0]).not.toMatch(/This is the new best/);
    expect(results[0]).toMatch(/No candidate of the run has beaten the baseline yet/);
    expect(h.events.filter((e) => e.event === 'newBest')).toEqual([]);

    await attributeGains(db.store);
    const asked = await db.store.questions.forRun(run.id);
    expect(asked.map((q) => [q.source, q.trigger, q.evalSeqAtAsk])).toEqual([['bank', 'plateau', 1]]);
    expect(asked[0]).toMatchObject({ bestBefore: 1, bestAfter: 1, gain: 1, evalsAfter: 1 });
  });
});
