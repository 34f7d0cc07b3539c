import { beforeEach, describe, expect, it } from 'vitest';
import { attributeGains, attributeQuestion, collectAskSummary, collectBankStats, pickBankQuestion } from '../../src/questions/index.js';
import type { Store } from '../../src/db/index.js';
import { BACKENDS, useTestDatabase } from '../support/db.js';
import { newRunInput } from '../support/factories.js';
import { entry, ev } from './fixtures.js';

describe('attributeQuestion over a fixed history', () => {
  const history = [ev(1, 1.1), ev(2, 'incorrect'), ev(3, 1.3), ev(4, 1.2), ev(5, 'incorrect'), ev(6, 1.5)];

  it('compares the best before the question with the best after its next k evaluations', () => {
    expect(attributeQuestion({ evalSeqAtAsk: 2 }, history, { k: 3, runEnded: false })).toEqual({
      bestBefore: 1.1,
      bestAfter: 1.3, // seq 3..5; the 1.5 at seq 6 is outside the window
      gain: 1.3 / 1.1,
      evalsAfter: 3,
    });
  });

  it('keeps the gain open while fewer than k evaluations followed in a live run', () => {
    expect(attributeQuestion({ evalSeqAtAsk: 4 }, history, { k: 3, runEnded: false })).toEqual({ bestBefore: 1.3, bestAfter: 1.5, gain: null, evalsAfter: 2 });
  });

  it('closes it when the run ended after at least one evaluation, never with none', () => {
    expect(attributeQuestion({ evalSeqAtAsk: 5 }, history, { k: 3, runEnded: true })).toEqual({ bestBefore: 1.3, bestAfter: 1.5, gain: 1.5 / 1.3, evalsAfter: 1 });
    expect(attributeQuestion({ evalSeqAtAsk: 6 }, history, { k: 3, runEnded: true })).toEqual({ bestBefore: 1.5, bestAfter: 1.5, gain: null, evalsAfter: 0 });
  });

  it('counts the baseline as 1.0x and a slower correct candidate as no gain', () => {
    const slow = [ev(1, 'compile_error'), ev(2, 0.8), ev(3, 0.9)];
    expect(attributeQuestion({ evalSeqAtAsk: 1 }, slow, { k: 2, runEnded: false })).toEqual({ bestBefore: 1, bestAfter: 1, gain: 1, evalsAfter: 2 });
    expect(attributeQuestion({ evalSeqAtAsk: 0 }, [ev(1, 1.25)], { k: 1, runEnded: false })).toEqual({ bestBefore: 1, bestAfter: 1.25, gain: 1.25, evalsAfter: 1 });
  });

  it('stops the window at an evaluation still pending, and waits for one pending before the question', () => {
    const pending = [ev(1, 1.2), ev(2, 'pending'), ev(3, 1.6)];
    expect(attributeQuestion({ evalSeqAtAsk: 1 }, pending, { k: 2, runEnded: false })).toEqual({ bestBefore: 1.2, bestAfter: 1.2, gain: null, evalsAfter: 0 });
    expect(attributeQuestion({ evalSeqAtAsk: 2 }, pending, { k: 1, runEnded: false })).toEqual({ bestBefore: 1.2, bestAfter: 1.6, gain: null, evalsAfter: 1 });
  });
});

describe.each(BACKENDS)('attributeGains on %s', (backend) => {
  const t = useTestDatabase(backend);
  let store: Store;
  beforeEach(() => {
    store = t.store;
  });

  async function createRun(): Promise<string> {
    const run = await store.runs.create(newRunInput({ task: 'fixture', owner: 'U1', origin: 'terminal', model: 'm', target: 1.5 }));
    await store.runs.transition(run.id, 'running');
    return run.id;
  }

  async function addEvaluations(runId: string, outcomes: (number | 'incorrect' | 'pending')[], firstSeq: number): Promise<void> {
    for (const [i, outcome] of outcomes.entries()) {
      const seq = firstSeq + i;
      const row = await store.evaluations.createPending({ runId, seq, task: 'fixture', jobId: `${runId}:${seq}`, candidateHash: `h${seq}`, source: '// kernel' });
      if (outcome === 'pending') continue;
      await store.evaluations.complete(row.id, {
        status: outcome === 'incorrect' ? 'incorrect' : 'ok',
        correct: outcome !== 'incorrect',
        speedupVsBaseline: outcome === 'incorrect' ? null : outcome,
        speedupVsBestPeer: null, result: null, gpu: null, arch: null, worker: 'w', harnessSeconds: 1, startedAt: new Date(),
      });
    }
  }

  async function ask(runId: string, evalSeqAtAsk: number, fields: { bankId?: string; externalId: string }): Promise<number> {
    const { question } = await store.questions.add({
      runId, evalSeqAtAsk, externalId: fields.externalId,
      source: fields.bankId ? 'bank' : 'human', bankId: fields.bankId ?? null,
      text: 'Which layer have you not looked at?', author: fields.bankId ? 'bank' : 'U2',
    });
    await store.questions.claimPending(runId);
    return question.id;
  }

  it('stores the before, after and gain of every asked question, incrementally as evaluations arrive', async () => {
    const runId = await createRun();
    await addEvaluations(runId, [1.1, 'incorrect'], 1);
    const fromBank = await ask(runId, 2, { bankId: 'part-not-looked-at', externalId: 'q1' });
    const fromPerson = await ask(runId, 2, { externalId: 'q2' });
    // Stored but never delivered: not asked yet, so not attributed.
    const { question: undelivered } = await store.questions.add({ runId, source: 'human', text: 'Later?', author: 'U3', externalId: 'q3', evalSeqAtAsk: 2 });

    await addEvaluations(runId, [1.3, 'incorrect'], 3);
    expect(await attributeGains(store, { k: 3 })).toEqual({ examined: 2, updated: 2, finalized: 0 });
    let q = await store.questions.get(fromBank);
    expect(q).toMatchObject({ bestBefore: 1.1, bestAfter: 1.3, gain: null, evalsAfter: 2 });

    await addEvaluations(runId, [1.2, 1.9], 5);
    expect(await attributeGains(store, { k: 3 })).toEqual({ examined: 2, updated: 2, finalized: 2 });
    q = await store.questions.get(fromBank);
    expect(q).toMatchObject({ bestBefore: 1.1, bestAfter: 1.3, evalsAfter: 3 });
    expect(q!.gain).toBeCloseTo(1.3 / 1.1, 12);
    expect((await store.questions.get(fromPerson))!.gain).toBeCloseTo(1.3 / 1.1, 12);
    expect((await store.questions.get(undelivered.id))).toMatchObject({ gain: null, evalsAfter: 0, bestBefore: null });

    // Final rows are not read again.
    expect(await attributeGains(store, { k: 3 })).toEqual({ examined: 0, updated: 0, finalized: 0 });
  });

  it('finalizes a question once its run ends, and aggregates gains per bank id', async () => {
    const runA = await createRun();
    await addEvaluations(runA, [1.0], 1);
    await ask(runA, 1, { bankId: 'hardware-or-design', externalId: 'a1' });
    await addEvaluations(runA, [1.21], 2);
    const runB = await createRun();
    await ask(runB, 0, { bankId: 'hardware-or-design', externalId: 'b1' });
    await addEvaluations(runB, [0.9, 1.0], 1);
    await ask(runB, 2, { bankId: 'smallest-experiment', externalId: 'b2' });
    await ask(runB, 2, { externalId: 'b3' });

    await attributeGains(store, { k: 2 });
    let stats = await collectBankStats(store);
    // runA's question has one evaluation after it and the run is live: not final yet.
    expect(stats.get('hardware-or-design')).toMatchObject({ asks: 2, attributed: 1, meanGain: 1 });

    await store.runs.transition(runA, 'finished', { endReason: 'budget' });
    expect(await attributeGains(store, { k: 2 })).toMatchObject({ finalized: 1 });
    stats = await collectBankStats(store);
    // Geometric mean of 1.21 (run A) and 1.0 (run B): 1.1.
    expect(stats.get('hardware-or-design')!.meanGain).toBeCloseTo(1.1, 12);
    expect(stats.get('hardware-or-design')).toMatchObject({ asks: 2, attributed: 2 });
    expect(stats.get('hardware-or-design')!.lastUsed).toBeInstanceOf(Date);
    expect(stats.get('smallest-experiment')).toMatchObject({ asks: 1, attributed: 0, meanGain: null });
    expect((await collectAskSummary(store)).people).toEqual({ asks: 1, attributed: 0, meanGain: null });
  });

  it('picks a bank question from what the store says about the run, ready to store and attribute', async () => {
    const runId = await createRun();
    await addEvaluations(runId, [1.2, 'incorrect', 'incorrect'], 1);
    const entries = [
      entry({ id: 'streak', triggers: ['failing'], text: 'After {failing_streak} failures, what do they share?', placeholders: ['failing_streak'] }),
      entry({ id: 'plain', triggers: ['failing'], text: 'Is the idea wrong, or its implementation?' }),
    ];
    // In another run 'plain' was asked and followed by a 1.5x gain.
    const otherRun = await createRun();
    const earlier = await ask(otherRun, 0, { bankId: 'plain', externalId: 'o1' });
    await store.questions.recordAttribution(earlier, { bestAfter: 1.5, gain: 1.5, evalsAfter: 5 });

    const first = await pickBankQuestion(store, { runId, trigger: 'failing', bank: { entries } });
    // 'streak' was never asked anywhere, so it is explored before 'plain', and filled with the measured streak.
    expect(first?.selection.entry.id).toBe('streak');
    expect(first?.question).toMatchObject({
      runId, source: 'bank', bankId: 'streak', author: 'bank', trigger: 'failing',
      text: 'After 2 failures, what do they share?', evalSeqAtAsk: 3, bestBefore: 1.2,
    });
    expect(first?.question.evidence).toMatchObject({ failing_streak: 2, best_speedup: 1.2, target: 1.5, stated: { failing_streak: 2 } });
    // The same state gives the same pick.
    expect((await pickBankQuestion(store, { runId, trigger: 'failing', bank: { entries } }))?.question).toEqual(first?.question);

    await store.questions.add(first!.question);
    await store.questions.claimPending(runId);
    const second = await pickBankQuestion(store, { runId, trigger: 'failing', bank: { entries } });
    expect(second?.selection.entry.id).toBe('plain'); // not repeated in the run
    expect(await pickBankQuestion(store, { runId, trigger: 'plateau', bank: { entries } })).toBeUndefined();
    await expect(pickBankQuestion(store, { runId: 'ks-nothere', trigger: 'failing', bank: { entries } })).rejects.toThrow(/does not exist/);
  });

  it('refuses a window of no evaluations', async () => {
    await expect(attributeGains(store, { k: 0 })).rejects.toThrow(/k must be a whole number/);
  });
});
