import { describe, expect, it } from 'vitest';
import { DecisionClosedError } from '../../src/agent/index.js';
import { UserInputError } from '../../src/core/errors.js';
import type { Run } from '../../src/db/index.js';
import { endTurn, userTexts } from '../support/anthropic/script.js';
import { useServiceFixture } from '../support/fixture.js';
import { startEngine, waitFor, type EngineHarness } from './helpers.js';

// Issue 43: an answer names the decision card it answers, and reaches that decision point or none.
// The model ends every turn at once, so the run moves from one decision point to the next; the
// bank answers only when asked (a long timeout), and convergence is out of the way.
const fx = useServiceFixture<EngineHarness>('postgres', 'ks-binding-');

const ENV = { KERNELSEEK_CONVERGE_STOPS: '50' };
const openCard = (r: Run | undefined) => (r?.state as { decision?: { id?: string } | null } | undefined)?.decision?.id;
const allUserTexts = () => fx.service!.server.requests.flatMap((r) => userTexts(r));

async function waitingAt(runId: string, card: string): Promise<Run> {
  return (await waitFor(`the run to wait at ${card}`, fx.runOf(runId), (r) => r?.status === 'waiting' && openCard(r) === card))!;
}

describe('answers bound to their decision card', () => {
  it('delivers an answer to its own card with its id, refuses one to a closed card, and never hands one to a later card', async () => {
    fx.service = await startEngine({ store: fx.db.store, dataDir: fx.dataDir, env: ENV, server: { fallback: () => endTurn('Nothing more for now.') } });
    const { engine } = fx.service;
    const run = await engine.startRun({ task: 'cpu_softmax', owner: 'alice', origin: 'api', questionTimeoutSeconds: 600 });
    const d1 = `${run.id}.d1`;
    const d2 = `${run.id}.d2`;
    await waitingAt(run.id, d1);
    expect((await engine.getStatus(run.id)).waitingFor).toMatchObject({ id: d1, trigger: 'stopped' });
    const cards = () => fx.db.store.decisionCards.forRun(run.id);
    expect((await cards()).map((c) => [c.id, c.closedAt])).toEqual([[d1, null]]);

    // 1. Bob answers d1: delivered at d1, and the model reads which decision it answers.
    const answered = await engine.submitQuestion(run.id, { text: 'What would you measure first?', author: 'bob', idempotencyKey: 'k1', decisionId: d1 });
    expect(answered).toMatchObject({ created: true, delivery: 'answers_decision' });
    await waitingAt(run.id, d2);
    expect(allUserTexts()).toContain(`Question from bob (answering decision ${d1}): What would you measure first?`);
    const [first, second] = await cards();
    expect(first).toMatchObject({ id: d1, closedBy: `question:${answered.question.id}` });
    expect(first!.closedAt).not.toBeNull();
    expect(second).toMatchObject({ id: d2, closedAt: null });

    // 2. Carol answers d1 after the run moved on: refused, naming the open card; nothing stored.
    const stale = engine.submitQuestion(run.id, { text: 'Yes, go ahead.', author: 'carol', idempotencyKey: 'k2', decisionId: d1 });
    await expect(stale).rejects.toBeInstanceOf(DecisionClosedError);
    await expect(stale).rejects.toMatchObject({ code: 'decision_closed', decisionId: d1, openDecisionId: d2 });
    // The redelivery of an accepted answer is still the same answer, not a refusal.
    expect(await engine.submitQuestion(run.id, { text: 'What would you measure first?', author: 'bob', idempotencyKey: 'k1', decisionId: d1 })).toMatchObject({ created: false });
    // A card that never existed is closed too (a forged button value changes nothing).
    await expect(engine.submitQuestion(run.id, { text: 'x', author: 'mallory', idempotencyKey: 'k3', decisionId: `${run.id}.d99` })).rejects.toMatchObject({ code: 'decision_closed' });
    expect((await fx.db.store.questions.forRun(run.id)).map((q) => q.author)).toEqual(['bob']);

    // 3. At d2, answers to d2 race the bank (asked now): each is delivered at d2 or refused, none is
    // left waiting, and none reaches d3.
    const requestsBefore = fx.service.server.requests.length;
    let n = 0;
    // Two people keep answering d2 while the bank settles it, until refusals show the card has closed.
    const keepAnswering = async () => {
      const outcomes: ('stored' | 'refused')[] = [];
      while (outcomes.filter((o) => o === 'refused').length < 3 && outcomes.length < 500) {
        const i = n++;
        outcomes.push(
          await engine.submitQuestion(run.id, { text: `Answer ${i} to d2?`, author: `racer${i}`, idempotencyKey: `race-${i}`, decisionId: d2 }).then(
            () => 'stored' as const,
            (e: unknown) => (e instanceof DecisionClosedError ? ('refused' as const) : Promise.reject(e)),
          ),
        );
      }
      return outcomes;
    };
    const racing = Promise.all([keepAnswering(), keepAnswering()]);
    // The bank is one of the racers: an answer may settle d2 before it is asked (a loaded machine did),
    // and then it is refused like any late answer.
    await engine.askFromBankNow(run.id).catch((e: unknown) => {
      if (!(e instanceof UserInputError && /is not at a decision point/.test(e.message))) throw e;
    });
    const outcomes = (await racing).flat();
    expect(outcomes).toContain('stored');
    expect(outcomes).toContain('refused');
    const d3 = `${run.id}.d3`;
    await waitingAt(run.id, d3);
    const stored = (await fx.db.store.questions.forRun(run.id)).filter((q) => q.author.startsWith('racer'));
    expect(stored).toHaveLength(outcomes.filter((o) => o === 'stored').length);
    expect(stored.every((q) => q.decisionId === d2 && q.deliveredAt !== null)).toBe(true);
    expect(await fx.db.store.agentRuns.pendingQuestions(run.id, d3)).toEqual([]);
    expect(await fx.db.store.agentRuns.pendingQuestions(run.id, d2)).toEqual([]);
    // Every stored answer reached the model in the one message that settled d2, and no other.
    const later = fx.service.server.requests.slice(requestsBefore);
    for (const q of stored) {
      const carrying = later.filter((r) => userTexts(r).some((t) => t.includes(`(answering decision ${d2}): ${q.text}`)));
      expect(carrying.length, `requests carrying ${q.text}`).toBe(1);
    }
    expect(later.flatMap((r) => userTexts(r)).some((t) => t.includes(d3))).toBe(false);

    // 4. The run ends: its open card closes with it, and an answer to it is refused with no open card.
    await engine.stopRun(run.id, { by: 'alice' });
    expect((await cards()).every((c) => c.closedAt !== null)).toBe(true);
    expect((await cards()).at(-1)).toMatchObject({ id: d3, closedBy: 'run_ended' });
    await expect(engine.submitQuestion(run.id, { text: 'Late?', author: 'bob', idempotencyKey: 'k4', decisionId: d3 })).rejects.toMatchObject({ openDecisionId: null });
  }, 60_000);

  it('continues a run from its best kernel with the history summarised, linked to its parent', async () => {
    fx.service = await startEngine({ store: fx.db.store, dataDir: fx.dataDir, env: ENV, server: { fallback: () => endTurn('Looking.') } });
    const { engine } = fx.service;
    const store = fx.db.store;
    const parent = await store.runs.create({
      id: 'ks-parent01', task: 'cpu_softmax', owner: 'alice', origin: 'api', model: 'claude-sonnet-4-6', target: 1.2, questionTimeoutSeconds: 600,
      budgetEvals: 10, budgetSteps: 10, budgetUsd: 1, budgetSeconds: 600,
    });
    const BEST = '// the best kernel of the parent\nextern "C" int softmax_rows(const float*, float*, long, long) { return 0; }\n';
    for (const [seq, speedup, source] of [[1, 1.05, '// one\n'], [2, null, '// two\n'], [3, 1.31, BEST]] as const) {
      const row = await store.evaluations.createPending({ runId: parent.id, seq, task: 'cpu_softmax', candidateHash: `h${seq}`, source, jobId: `eval:${parent.id}:${seq}` });
      await store.evaluations.complete(row.id, {
        status: speedup === null ? 'incorrect' : 'ok', correct: speedup !== null, speedupVsBaseline: speedup, speedupVsBestPeer: speedup === null ? null : speedup * 0.9,
        result: { summary: { scenarios: 11, correct: speedup === null ? 3 : 11, speedup_vs_baseline_ci: speedup === null ? null : [speedup - 0.02, speedup + 0.03] } },
        gpu: null, arch: null, worker: 'w/0', harnessSeconds: 1, startedAt: new Date(),
      });
      if (speedup !== null) await store.runs.offerBest(parent.id, row.id, speedup, speedup * 0.9);
    }
    await store.questions.add({ runId: parent.id, source: 'human', text: 'What bounds the slowest scenario?', author: 'bob', externalId: 'p1', evalSeqAtAsk: 1, deliveredAt: new Date() });
    await store.runs.transition(parent.id, 'running');
    await store.runs.transition(parent.id, 'finished', { endReason: 'budget_evals' });

    const child = await engine.startRun({ task: 'cpu_softmax', owner: 'carol', origin: 'api', continueFrom: parent.id, target: 1.5 });
    expect(child.parentRunId).toBe(parent.id);
    expect(child.target).toBe(1.5);
    expect((await store.runs.childrenOf(parent.id)).map((r) => r.id)).toEqual([child.id]);
    const brief = (await store.transcript.messages(child.id))[0]!;
    const text = JSON.stringify(brief.content);
    expect(text).toContain(`This run continues run ${parent.id}`);
    expect(text).toContain('eval #3: 1.310x vs the baseline (95 % interval 1.290x–1.340x)');
    expect(text).toContain('#2: incorrect');
    expect(text).toContain('a person (bob): \\"What bounds the slowest scenario?\\"');
    // The model's first request starts from that brief; the workspace holds the parent's best.
    await waitFor('the first model call', async () => fx.service!.server.requests.length, (n) => n > 0);
    expect(JSON.stringify(fx.service.server.requests[0]!.body.messages[0])).toContain(`This run continues run ${parent.id}`);
    const { readFile } = await import('node:fs/promises');
    const path = await import('node:path');
    expect(await readFile(path.join(fx.dataDir, 'workspaces', child.id, 'kernel.cpp'), 'utf8')).toBe(BEST);

    // A fork keeps the parent's target unless told otherwise; a run with nothing correct cannot be continued.
    const fork = await engine.startRun({ task: 'cpu_softmax', owner: 'carol', origin: 'api', continueFrom: parent.id });
    expect(fork.target).toBe(1.2);
    await engine.stopRun(fork.id);
    await engine.stopRun(child.id);
    const empty = await store.runs.create({ id: 'ks-empty001', task: 'cpu_softmax', owner: 'a', origin: 'api', model: 'm', target: 1, questionTimeoutSeconds: 60, budgetEvals: 1, budgetSteps: 1, budgetUsd: 1, budgetSeconds: 60 });
    await expect(engine.startRun({ task: 'cpu_softmax', owner: 'a', origin: 'api', continueFrom: empty.id })).rejects.toThrow(/no correct kernel to continue from/);
    await expect(engine.startRun({ task: 'cpu_softmax', owner: 'a', origin: 'api', continueFrom: 'ks-nothere1' })).rejects.toBeInstanceOf(UserInputError);
    await expect(engine.startRun({ task: 'rmsnorm', owner: 'a', origin: 'api', continueFrom: parent.id })).rejects.toThrow(/is a run of cpu_softmax, not rmsnorm/);
  }, 60_000);
});
