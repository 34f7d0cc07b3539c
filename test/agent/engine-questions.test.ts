import { describe, expect, it } from 'vitest';
import { UserInputError } from '../../src/core/errors.js';
import { endTurn, reply, toolUse, userTexts } from '../support/anthropic/script.js';
import type { RecordedRequest } from '../support/anthropic/server.js';
import { useServiceFixture } from '../support/fixture.js';
import { expectConsistentConversation, startEngine, waitFor, type EngineHarness } from './helpers.js';

// Questions: a person's first at a decision point, the bank on timeout or on request, replies at
// other times delivered at the next turn boundary in order and exactly once. Run on PostgreSQL,
// where concurrent workers and the transaction that delivers questions matter.
const fx = useServiceFixture<EngineHarness>('postgres', 'ks-questions-');

const questionTexts = (req: RecordedRequest) => userTexts(req).filter((t) => t.startsWith('Question'));

describe('questions', () => {
  it('at a decision point takes a person\'s question before the timeout, and the bank\'s after it', async () => {
    const waits: number[] = [];
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      server: {
        script: [
          endTurn('I think this is done.'),
          (req) => {
            expect(questionTexts(req)).toEqual(['Question from alice: What would change if the rows were much longer?']);
            return endTurn('Longer rows are handled the same way; nothing more to do.');
          },
          (req) => {
            waits.push(req.at);
            expect(questionTexts(req)).toHaveLength(1);
            expect(questionTexts(req)[0]).toMatch(/^Question \(from the question bank\): /);
            return endTurn('Still thinking.');
          },
        ],
      },
    });
    const run = await fx.service!.engine.startRun({ task: 'cpu_softmax', owner: 'alice', origin: 'api', questionTimeoutSeconds: 30, budgets: { steps: 3 } });
    const first = await waitFor('the first decision point', fx.runOf(run.id), (r) => r?.status === 'waiting');
    const decisionOf = (r: { state: unknown } | null | undefined) => (r?.state as { decision?: { at: string } } | undefined)?.decision;
    const firstAt = decisionOf(first)?.at;
    expect((await fx.service!.engine.getStatus(run.id)).waitingFor).toMatchObject({ trigger: 'stopped' });
    const submitted = await fx.service!.engine.submitQuestion(run.id, { text: 'What would change if the rows were much longer?', author: 'alice', idempotencyKey: 'slack:1.001' });
    expect(submitted).toMatchObject({ created: true, delivery: 'answers_decision' });
    // A redelivered event with the same key changes nothing.
    expect((await fx.service!.engine.submitQuestion(run.id, { text: 'What would change if the rows were much longer?', author: 'alice', idempotencyKey: 'slack:1.001' })).created).toBe(false);

    // The second decision point: nobody answers; the timeout is shortened through the store so the
    // test does not wait 30 s (the deadline is data, as it is for a worker that restarts).
    await waitFor('the second decision point', () => fx.db.store.questions.forRun(run.id), (q) => q.length === 1 && q[0]!.deliveredAt !== null);
    // The second decision, not the first one still on record (a CI run patched the first's deadline,
    // and the second then waited its full 30 s).
    const waiting = await waitFor('waiting again', fx.runOf(run.id), (r) => r?.status === 'waiting' && decisionOf(r) != null && decisionOf(r)!.at !== firstAt);
    const decisionAt = Date.parse((waiting!.state as { decision: { at: string } }).decision.at);
    await fx.db.store.agentRuns.patchState(run.id, { decision: { ...(waiting!.state as { decision: object }).decision, deadline: new Date(Date.now() + 1500).toISOString() } });
    // Wake the waiting turn: it sees the new deadline and schedules itself for it.
    const [delayed] = await waitFor('the turn to wait on its deadline', async () => fx.service!.scheduler.delayed(), (jobs) => jobs.length === 1);
    await fx.service!.scheduler.wake(delayed!);
    const done = await waitFor('the run to end', fx.runOf(run.id), (r) => r?.status === 'finished', 30_000);
    expect(done!.endReason).toBe('budget_steps');
    expect(waits[0]! - decisionAt).toBeGreaterThanOrEqual(1400);

    const questions = await fx.db.store.questions.forRun(run.id);
    expect(questions.map((q) => [q.source, q.trigger, q.author])).toEqual([
      ['human', 'stopped', 'alice'],
      ['bank', 'stopped', 'bank'],
    ]);
    expect(questions.every((q) => q.deliveredAt !== null && q.evalSeqAtAsk === 0)).toBe(true);
    expectConsistentConversation(fx.service!.server.requests);
    const asked = fx.service!.events.filter((e) => e.event === 'questionAsked').map((e) => (e.data as unknown as { question: { source: string } }).question.source);
    expect(asked).toEqual(['human', 'bank']);
  });

  it('delivers replies that arrive between decision points at the next turn boundary, in order, exactly once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_STEPS_PER_TURN: '1' },
      server: {
        script: [
          async () => {
            await gate;
            return reply(toolUse('bash', { command: 'true' }));
          },
          (req) => {
            expect(questionTexts(req)).toEqual(['Question from bob: first?', 'Question from carol: second?']);
            return reply(toolUse('bash', { command: 'true' }));
          },
          (req) => {
            expect(questionTexts(req)).toEqual([]);
            return reply(toolUse('bash', { command: 'true' }));
          },
        ],
      },
    });
    const run = await fx.service!.engine.startRun({ task: 'cpu_softmax', owner: 'bob', origin: 'api', budgets: { steps: 3 } });
    await waitFor('the first model call', async () => fx.service!.server.requests.length, (n) => n === 1);
    expect((await fx.service!.engine.submitQuestion(run.id, { text: 'first?', author: 'bob', idempotencyKey: 'a' })).delivery).toBe('next_turn');
    await fx.service!.engine.submitQuestion(run.id, { text: 'second?', author: 'carol', idempotencyKey: 'b' });
    await fx.service!.engine.submitQuestion(run.id, { text: 'first?', author: 'bob', idempotencyKey: 'a' });
    release();
    await waitFor('the run to end', fx.runOf(run.id), (r) => r?.status === 'finished');
    const questions = await fx.db.store.questions.forRun(run.id);
    expect(questions.map((q) => [q.author, q.text, q.trigger])).toEqual([
      ['bob', 'first?', null],
      ['carol', 'second?', null],
    ]);
    expect(fx.service!.server.requests).toHaveLength(3);
    expectConsistentConversation(fx.service!.server.requests);
  });

  it('asks the bank at once when a person presses “Ask from the bank”, and refuses it outside decision points', async () => {
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      server: { script: [endTurn('Nothing left to try.'), (req) => (expect(questionTexts(req)[0]).toMatch(/question bank/), endTurn('Hmm.'))] },
    });
    const run = await fx.service!.engine.startRun({ task: 'cpu_softmax', owner: 'dan', origin: 'api', questionTimeoutSeconds: 3600, budgets: { steps: 2 } });
    await expect(fx.service!.engine.askFromBankNow(run.id)).rejects.toBeInstanceOf(UserInputError);
    await waitFor('the decision point', fx.runOf(run.id), (r) => r?.status === 'waiting');
    await fx.service!.engine.askFromBankNow(run.id);
    await waitFor('the run to end', fx.runOf(run.id), (r) => r?.status === 'finished');
    expect((await fx.db.store.questions.forRun(run.id)).map((q) => q.source)).toEqual(['bank']);
  });

  it('refuses bad questions and control requests with messages people can act on', async () => {
    fx.service = await startEngine({ store: fx.db.store, dataDir: fx.dataDir, server: { script: [endTurn('done')] } });
    const run = await fx.service!.engine.startRun({ task: 'cpu_softmax', owner: 'erin', origin: 'api', questionTimeoutSeconds: 3600 });
    await expect(fx.service!.engine.submitQuestion(run.id, { text: '   ', author: 'erin', idempotencyKey: 'x' })).rejects.toThrow(/empty/);
    await expect(fx.service!.engine.submitQuestion(run.id, { text: 'x'.repeat(5000), author: 'erin', idempotencyKey: 'y' })).rejects.toThrow(/under 4000/);
    await expect(fx.service!.engine.submitQuestion('ks-nosuchrun', { text: 'hi?', author: 'erin', idempotencyKey: 'z' })).rejects.toThrow(/no run/);
    await expect(fx.service!.engine.addBudget(run.id, { evals: -3 })).rejects.toThrow(/only grow/);
    await expect(fx.service!.engine.startRun({ task: 'no_such_task', owner: 'erin', origin: 'api' })).rejects.toThrow(/Unknown task 'no_such_task'. Available tasks: cpu_softmax/);
    expect((await fx.service!.engine.addBudget(run.id, { evals: 10 })).evaluations.budget).toBe(60);
    await waitFor('waiting', fx.runOf(run.id), (r) => r?.status === 'waiting');
    const stopped = await fx.service!.engine.stopRun(run.id, { by: 'erin' });
    expect(stopped).toMatchObject({ status: 'stopped', endReason: 'stopped_by_user' });
    await expect(fx.service!.engine.submitQuestion(run.id, { text: 'still there?', author: 'erin', idempotencyKey: 'w' })).rejects.toThrow(/already been stopped/);
    expect(fx.service!.events.filter((e) => e.event === 'runFinished')).toHaveLength(1);
  });
});
