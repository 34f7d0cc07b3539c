import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeDigest } from '../../src/digest/index.js';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/db.js';
import { at } from './factories.js';
import { seedDigestScenario, WINDOW } from './scenario.js';

describe.each(BACKENDS)('computeDigest over a seeded store (%s)', (backend) => {
  let t: TestDatabase;
  let ids: Awaited<ReturnType<typeof seedDigestScenario>>;

  // Every test here only reads: one seeded database per backend.
  beforeAll(async () => {
    t = await createTestDatabase(backend);
    ids = await seedDigestScenario(t.store);
  });
  afterAll(async () => {
    await t.dispose();
  });

  it('counts runs alive in the window by their state at its end', async () => {
    const f = await computeDigest(t.store, WINDOW);
    expect(f.window).toEqual({ from: '2026-03-13T09:00:00.000Z', to: '2026-03-14T09:00:00.000Z' });
    expect({ ...f.runs, list: undefined }).toEqual({ started: 3, active: 2, finished: 1, stopped: 1, failed: 1, list: undefined });
    expect(f.runs.list.map((r) => [r.id, r.state, r.status, r.startedInWindow, r.evaluations, r.costUsd, r.bestSpeedup])).toEqual([
      ['ks-run4', 'active', 'failed', true, 1, 0, 2],
      ['ks-run1', 'active', 'running', false, 2, 0.25, 1.5],
      ['ks-run2', 'finished', 'finished', true, 2, 0.625, 1.5],
      ['ks-run3', 'stopped', 'stopped', true, 3, 1, 1.125],
      ['ks-run7', 'failed', 'failed', false, 0, 0.0625, null],
    ]);
    const run3 = f.runs.list.find((r) => r.id === 'ks-run3')!;
    expect(run3).toMatchObject({ owner: 'U0ALICE', endReason: 'stopped by U0ALICE', slackChannel: 'C0KERNELS', slackThreadTs: '1773392400.000100', bestSpeedupVsPeer: 0.5 });
  });

  it('reports the best counted candidate per task and architecture, against the baseline and the strongest peer', async () => {
    const f = await computeDigest(t.store, WINDOW);
    expect(f.tasks).toEqual([
      {
        task: 'cpu_softmax', arch: 'cpu', runs: 1, evaluations: 1, correct: 1, previousBest: null, progress: [{ at: '2026-03-14T08:45:00.000Z', speedup: 2 }], harnessSeconds: 4, costUsd: 0,
        best: { speedupVsBaseline: 2, speedupVsPeer: null, peer: null, runId: 'ks-run4', evaluationId: ids.evals.e8, seq: 1, at: '2026-03-14T08:45:00.000Z' },
      },
      {
        // The quick-subset 2.0x and the rejected 3.0x do not count; the ad-hoc 5.0x is not a run's.
        task: 'flash_attn_fwd', arch: 'sm_90', runs: 1, evaluations: 3, correct: 1, previousBest: null, progress: [{ at: '2026-03-13T11:30:00.000Z', speedup: 1.125 }], harnessSeconds: 85, costUsd: 1,
        best: { speedupVsBaseline: 1.125, speedupVsPeer: 0.5, peer: 'cudnn', runId: 'ks-run3', evaluationId: ids.evals.e5, seq: 1, at: '2026-03-13T11:30:00.000Z' },
      },
      {
        // Two candidates at 1.5x: the earlier one is the best. Up from 1.25x (the quick 1.1x never counted).
        task: 'rmsnorm', arch: 'sm_90', runs: 2, evaluations: 4, correct: 2, previousBest: 1.25,
        // The second 1.5x is no new best.
        progress: [{ at: '2026-03-13T10:00:00.000Z', speedup: 1.5 }], harnessSeconds: 62.5, costUsd: 0.875,
        best: { speedupVsBaseline: 1.5, speedupVsPeer: 0.875, peer: 'torch_compile', runId: 'ks-run1', evaluationId: ids.evals.e1, seq: 3, at: '2026-03-13T10:00:00.000Z' },
      },
      // Model calls but no evaluation: the line shows money spent without a candidate.
      { task: 'rmsnorm', arch: 'sm_100', runs: 1, evaluations: 0, correct: 0, previousBest: null, progress: [], harnessSeconds: 0, costUsd: 0.0625, best: null },
    ]);
  });

  it('sums evaluations, harness time and model cost in the window only', async () => {
    const f = await computeDigest(t.store, WINDOW);
    expect(f.evaluations).toEqual({
      total: 9,
      correct: 5,
      quick: 1,
      byStatus: { ok: 6, incorrect: 1, compile_error: 1, rejected: 1 },
      adHoc: 1,
      harnessSeconds: 159.5,
      gpuSeconds: 155.5,
    });
    expect(f.model).toEqual({ costUsd: 1.9375, steps: 5, inputTokens: 7600, outputTokens: 1410 });
  });

  it('counts questions by source and lists those that preceded the gains reached in the window', async () => {
    const f = await computeDigest(t.store, WINDOW);
    expect({ human: f.questions.human, bank: f.questions.bank, people: f.questions.people }).toEqual({ human: 3, bank: 2, people: 2 });
    expect(f.questions.top).toEqual([
      {
        questionId: ids.questions.q2, runId: 'ks-run2', task: 'rmsnorm', source: 'bank', author: 'bank', bankId: 'layer-memory',
        text: 'Which layer of the memory hierarchy is the kernel waiting on?', bestBefore: 1, bestAfter: 1.5, gain: 1.5, final: false,
        askedAt: '2026-03-13T12:30:00.000Z', realizedAt: '2026-03-13T13:00:00.000Z',
      },
      {
        questionId: ids.questions.q1, runId: 'ks-run1', task: 'rmsnorm', source: 'human', author: 'U0CAROL', bankId: null,
        text: 'What fraction of peak bandwidth does the best kernel reach?', bestBefore: 1.25, bestAfter: 1.5, gain: 1.2, final: true,
        askedAt: '2026-03-12T11:00:00.000Z', realizedAt: '2026-03-13T10:00:00.000Z',
      },
      {
        questionId: ids.questions.q4, runId: 'ks-run3', task: 'flash_attn_fwd', source: 'bank', author: 'bank', bankId: 'limit-claimed',
        text: 'Which measurement shows that limit is real?', bestBefore: 1, bestAfter: 1.125, gain: 1.125, final: true,
        askedAt: '2026-03-13T11:00:00.000Z', realizedAt: '2026-03-13T11:30:00.000Z',
      },
    ]);
    const topTwo = await computeDigest(t.store, WINDOW, { topQuestions: 2 });
    expect(topTwo.questions.top.map((q) => q.questionId)).toEqual([ids.questions.q2, ids.questions.q1]);
  });

  it('moves with the window: the next day sees the late evaluation, not yesterday’s', async () => {
    const next = await computeDigest(t.store, { from: WINDOW.to, to: at('2026-03-15T09:00:00Z') });
    expect(next.evaluations.total).toBe(1);
    expect(next.tasks.find((l) => l.task === 'rmsnorm')).toMatchObject({ arch: 'sm_90', previousBest: 1.5, progress: [{ at: '2026-03-14T09:00:00.000Z', speedup: 4 }], best: { speedupVsBaseline: 4, evaluationId: ids.evals.e10 } });
    expect(next.questions).toMatchObject({ human: 1, bank: 0, people: 1, top: [] });
    expect(next.model).toEqual({ costUsd: 2, steps: 1, inputTokens: 1, outputTokens: 1 });
    expect(next.runs.list.map((r) => [r.id, r.state])).toEqual([
      ['ks-run1', 'active'],
      ['ks-run6', 'active'],
      ['ks-run4', 'failed'],
    ]);
  });

  it('gives empty figures for a quiet window and refuses a window that ends before it starts', async () => {
    const quiet = await computeDigest(t.store, { from: at('2020-01-01T00:00:00Z'), to: at('2020-01-02T00:00:00Z') });
    expect(quiet).toMatchObject({ runs: { started: 0, active: 0, list: [] }, tasks: [], evaluations: { total: 0, harnessSeconds: 0 }, model: { costUsd: 0, steps: 0 }, questions: { human: 0, bank: 0, top: [] } });
    await expect(computeDigest(t.store, { from: WINDOW.to, to: WINDOW.from })).rejects.toThrow(/must end after it starts/);
  });
});
