import { beforeEach, describe, expect, it } from 'vitest';
import { BACKENDS, useTestDatabase } from '../support/db.js';
import { newRunInput } from '../support/factories.js';
import type { NewRun, Store } from '../../src/db/index.js';

const newRun = (overrides: Partial<NewRun> = {}) => newRunInput({ budgetEvals: 20, ...overrides });

// The same assertions run against PostgreSQL and the embedded PGlite.
describe.each(BACKENDS)('run store on %s', (backend) => {
  const t = useTestDatabase(backend);
  let store: Store;
  beforeEach(() => {
    store = t.store;
  });

  it('creates runs with typeable ids and finds them by Slack thread', async () => {
    const run = await store.runs.create(newRun({ origin: 'slack', slackChannel: 'C1', slackThreadTs: '1700000000.000100' }));
    expect(run.id).toMatch(/^ks-[a-z2-9]{8}$/);
    expect(run.status).toBe('queued');
    expect((await store.runs.findByThread('C1', '1700000000.000100'))?.id).toBe(run.id);
    expect(await store.runs.findByThread('C1', 'other')).toBeUndefined();
    await expect(store.runs.create(newRun({ origin: 'slack', slackChannel: 'C1', slackThreadTs: '1700000000.000100' }))).rejects.toThrow();
  });

  it('moves runs only along the state machine', async () => {
    const run = await store.runs.create(newRun());
    expect(await store.runs.transition(run.id, 'waiting')).toBeUndefined();
    const running = await store.runs.transition(run.id, 'running');
    expect(running?.status).toBe('running');
    expect(running?.startedAt).toBeInstanceOf(Date);
    expect((await store.runs.transition(run.id, 'waiting'))?.status).toBe('waiting');
    const finished = await store.runs.transition(run.id, 'finished', { endReason: 'target_reached' });
    expect(finished?.finishedAt).toBeInstanceOf(Date);
    expect(finished?.endReason).toBe('target_reached');
    expect(await store.runs.transition(run.id, 'running')).toBeUndefined();
    expect((await store.runs.get(run.id))?.status).toBe('finished');
  });

  it('holds a re-opening asked for while an end is written for the end to act on, exactly once', async () => {
    const run = await store.runs.create(newRun());
    await store.runs.transition(run.id, 'running');
    const ended = await store.runs.transition(run.id, 'finished', { endReason: 'converged' }, { ending: true });
    expect(ended?.state).toMatchObject({ ending: true });
    // While the end is written: no re-opening; the request is recorded for the end.
    expect(await store.runs.reopen(ended!, { stopStreak: 0 })).toBeUndefined();
    expect(await store.runs.requestReopen(run.id)).toBe(true);
    expect(await store.runs.requestReopen(run.id)).toBe(true); // a second ask is the same ask
    expect(await store.runs.settleEnd(run.id)).toBe(true);
    expect((await store.runs.get(run.id))!.state).not.toHaveProperty('ending');
    // Settled: a request finds no mark (the caller re-opens itself), and re-opening works.
    expect(await store.runs.requestReopen(run.id)).toBe(false);
    expect(await store.runs.settleEnd(run.id)).toBe(false);
    expect((await store.runs.reopen(ended!, { stopStreak: 0 }))?.status).toBe('running');
    // An end nobody asked to continue settles without a re-opening.
    await store.runs.transition(run.id, 'finished', { endReason: 'converged' }, { ending: true });
    expect(await store.runs.settleEnd(run.id)).toBe(false);
  });

  it('settles an end and takes a concurrent re-opening request exactly once between them', async () => {
    for (let i = 0; i < 10; i++) {
      const run = await store.runs.create(newRun());
      await store.runs.transition(run.id, 'running');
      await store.runs.transition(run.id, 'finished', { endReason: 'converged' }, { ending: true });
      const [asked, settledWithAsk] = await Promise.all([store.runs.requestReopen(run.id), store.runs.settleEnd(run.id)]);
      // Either the request came first (the end re-opens) or the end did (the asker re-opens): never both, never neither.
      expect(asked).toBe(settledWithAsk);
      expect((await store.runs.get(run.id))!.state).not.toHaveProperty('ending');
    }
  });

  it('lets exactly one of two concurrent transitions win', async () => {
    const run = await store.runs.create(newRun());
    await store.runs.transition(run.id, 'running');
    const [a, b] = await Promise.all([store.runs.transition(run.id, 'stopped'), store.runs.transition(run.id, 'finished')]);
    expect([a, b].filter(Boolean)).toHaveLength(1);
  });

  it('accumulates usage atomically and keeps the best speedup', async () => {
    const run = await store.runs.create(newRun());
    await Promise.all(
      Array.from({ length: 10 }, () =>
        store.runs.addUsage(run.id, { costUsd: 0.01, inputTokens: 100, outputTokens: 10, cacheReadTokens: 50, cacheWriteTokens: 5, steps: 1 }),
      ),
    );
    const after = await store.runs.get(run.id);
    expect(after?.inputTokens).toBe(1000);
    expect(after?.stepsUsed).toBe(10);
    expect(after?.costUsd).toBeCloseTo(0.1, 10);
    expect(await store.runs.offerBest(run.id, 1, 1.5, 0.7)).toBe(true);
    expect(await store.runs.offerBest(run.id, 2, 1.2, 0.6)).toBe(false);
    expect(await store.runs.offerBest(run.id, 3, 2.0, 0.9)).toBe(true);
    expect((await store.runs.get(run.id))?.bestEvaluationId).toBe(3);
  });

  it('refuses a second message at the same position of a conversation', async () => {
    const run = await store.runs.create(newRun());
    await store.transcript.appendMessage(run.id, 0, 'user', [{ type: 'text', text: 'go' }]);
    await expect(store.transcript.appendMessage(run.id, 0, 'user', [{ type: 'text', text: 'again' }])).rejects.toThrow();
    await store.transcript.appendMessage(run.id, 1, 'assistant', [{ type: 'text', text: 'ok' }]);
    expect(await store.transcript.nextMessageSeq(run.id)).toBe(2);
    expect((await store.transcript.messages(run.id)).map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('records model steps and tool calls', async () => {
    const run = await store.runs.create(newRun());
    await store.transcript.recordStep({ runId: run.id, seq: 0, model: 'm', request: { messages: 1 }, response: { content: [] }, stopReason: 'tool_use', inputTokens: 10, costUsd: 0.001 });
    await store.transcript.startToolCall({ runId: run.id, stepSeq: 0, toolUseId: 'toolu_1', name: 'bash', input: { command: 'ls' } });
    await store.transcript.startToolCall({ runId: run.id, stepSeq: 0, toolUseId: 'toolu_1', name: 'bash', input: { command: 'ls' } });
    await store.transcript.finishToolCall(run.id, 'toolu_1', { output: 'kernel.cpp' }, false, 12);
    const calls = await store.transcript.toolCalls(run.id);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.result).toEqual({ output: 'kernel.cpp' });
    expect(await store.transcript.nextStepSeq(run.id)).toBe(1);
  });

  it('hands each pending question out exactly once, in order, and ignores redeliveries', async () => {
    const run = await store.runs.create(newRun());
    const first = await store.questions.add({ runId: run.id, source: 'human', text: 'Why is the slowest scenario slow?', author: 'U1', externalId: '111.1' });
    const again = await store.questions.add({ runId: run.id, source: 'human', text: 'Why is the slowest scenario slow?', author: 'U1', externalId: '111.1' });
    expect(first.created).toBe(true);
    expect(again.created).toBe(false);
    expect(again.question.id).toBe(first.question.id);
    await store.questions.add({ runId: run.id, source: 'human', text: 'What else limits it?', author: 'U2', externalId: '111.2' });
    const [a, b] = await Promise.all([store.questions.claimPending(run.id), store.questions.claimPending(run.id)]);
    const claimed = [...a, ...b];
    expect(claimed.map((q) => q.text)).toEqual(['Why is the slowest scenario slow?', 'What else limits it?']);
    expect(await store.questions.claimPending(run.id)).toEqual([]);
  });

  it('creates one evaluation row per job id', async () => {
    const run = await store.runs.create(newRun());
    const a = await store.evaluations.createPending({ runId: run.id, seq: 1, task: 'cpu_softmax', jobId: `${run.id}:1`, candidateHash: 'h', source: 'int main(){}' });
    const b = await store.evaluations.createPending({ runId: run.id, seq: 1, task: 'cpu_softmax', jobId: `${run.id}:1`, candidateHash: 'h', source: 'int main(){}' });
    expect(b.id).toBe(a.id);
    const done = await store.evaluations.complete(a.id, {
      status: 'ok', correct: true, speedupVsBaseline: 1.2, speedupVsBestPeer: 0.5, result: { schema: 'kernelseek.eval/1' },
      gpu: null, arch: null, worker: 'w1', harnessSeconds: 2.5, startedAt: new Date(),
    });
    expect(done.finishedAt).toBeInstanceOf(Date);
    expect(await store.evaluations.forRun(run.id)).toHaveLength(1);
  });

  it('marks Slack events seen once and lets one scheduler claim a digest', async () => {
    expect(await store.slackEvents.markSeen('Ev1', 'message')).toBe(true);
    expect(await store.slackEvents.markSeen('Ev1', 'message')).toBe(false);
    const window = { windowStart: new Date('2026-11-29T09:00:00Z'), windowEnd: new Date('2026-11-30T09:00:00Z'), payload: {} };
    const claims = await Promise.all([
      store.digests.claim({ channel: 'C1', day: '2026-11-30', ...window }),
      store.digests.claim({ channel: 'C1', day: '2026-11-30', ...window }),
    ]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await store.digests.claim({ channel: 'C2', day: '2026-11-30', ...window })).toBeDefined();
  });
});
