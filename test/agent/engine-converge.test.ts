import { describe, expect, it } from 'vitest';
import { endTurn, reply, toolUse, userTexts } from '../support/anthropic/script.js';
import { useServiceFixture } from '../support/fixture.js';
import { CORRECT } from './fixtures/kernels.js';
import { expectConsistentConversation, startEngine, waitFor, type EngineHarness } from './helpers.js';

// A model that keeps saying it is finished must not cycle the bank until a budget runs out.
const fx = useServiceFixture<EngineHarness>('pglite', 'ks-converge-');

const bankQuestions = (h: EngineHarness) => h.events.filter((e) => e.event === 'questionAsked' && (e.data as unknown as { question: { source: string } }).question.source === 'bank').length;

describe('convergence', () => {
  it('ends a run as converged after K stops in a row with no evaluation between them (default K)', async () => {
    fx.service = await startEngine({ store: fx.db.store, dataDir: fx.dataDir, server: { fallback: () => endTurn('Finished.') } });
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true });
    const done = await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'finished');
    expect(done!.endReason).toBe('converged');
    const k = fx.service.config.agent.runs.convergeStops;
    expect(k).toBeGreaterThan(1);
    // K model calls, each ending in a stop; a bank question between each pair, none after the last.
    expect(fx.service.server.requests).toHaveLength(k);
    expect(bankQuestions(fx.service)).toBe(k - 1);
    expect(fx.service.events.filter((e) => e.event === 'decisionPoint')).toHaveLength(k - 1);
    await waitFor('the summary', async () => fx.service!.events.find((e) => e.event === 'runFinished'), Boolean);
    const finished = fx.service.events.find((e) => e.event === 'runFinished')!.data as unknown as { summary: { endReason: string } };
    expect(finished.summary.endReason).toBe('converged');
    expect(done!.stepsUsed).toBe(k);
  });

  it('an evaluation between two stops starts the streak again', async () => {
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_CONVERGE_STOPS: '2' },
      server: {
        script: [
          endTurn('Done, I think.'),
          reply(toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: CORRECT }), toolUse('evaluate', { scenarios: 'quick' })),
          endTurn('Done now.'),
        ],
        fallback: () => endTurn('Really done.'),
      },
    });
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true, scenarios: 'quick', target: 100 });
    const done = await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'finished');
    expect(done!.endReason).toBe('converged');
    expect(done!.evalsUsed).toBe(1);
    // stop (1), evaluate, stop (1 again: an evaluation came between), stop (2: converged).
    expect(fx.service.server.requests).toHaveLength(4);
    expectConsistentConversation(fx.service.server.requests);
  });

  it('a question re-opens a converged run, reaches the model, and the streak counts afresh; other ends stay final', async () => {
    fx.service = await startEngine({ store: fx.db.store, dataDir: fx.dataDir, env: { KERNELSEEK_CONVERGE_STOPS: '2' }, server: { fallback: () => endTurn('Finished.') } });
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true });
    await waitFor('converged', fx.runOf(run.id), (r) => r?.endReason === 'converged');
    await fx.service.scheduler.idle(run.id);
    expect(fx.service.server.requests).toHaveLength(2);

    const submitted = await fx.service.engine.submitQuestion(run.id, { text: 'Did you try a wider vector load?', author: 'alice', idempotencyKey: 'k-1' });
    expect(submitted.created).toBe(true);
    await waitFor('the question to reach the model', async () => fx.service!.server.requests.length, (n) => n >= 3);
    expect(userTexts(fx.service.server.requests[2]!)).toContain('Question from alice: Did you try a wider vector load?');
    const again = await waitFor('converged again', fx.runOf(run.id), (r) => r?.status === 'finished' && fx.service!.server.requests.length >= 4);
    expect(again!.endReason).toBe('converged');
    // The re-opened run needs K fresh stops: the question's answer (1), a bank question, a stop (2).
    expect(fx.service.server.requests).toHaveLength(4);
    expectConsistentConversation(fx.service.server.requests);
    // The same reply redelivered (Slack retries) does not re-open it again.
    const redelivered = await fx.service.engine.submitQuestion(run.id, { text: 'Did you try a wider vector load?', author: 'alice', idempotencyKey: 'k-1' });
    expect(redelivered.created).toBe(false);
    expect((await fx.db.store.runs.get(run.id))!.status).toBe('finished');

    // Resume (the Slack `resume` reply, `run --resume`) re-opens it with a bank question.
    await fx.service.engine.resumeRun(run.id);
    await waitFor('converged a third time', fx.runOf(run.id), (r) => r?.status === 'finished' && fx.service!.server.requests.length >= 6);
    expect(userTexts(fx.service.server.requests[4]!).some((t) => t.startsWith('Question (from the question bank)'))).toBe(true);

    await fx.service.scheduler.idle(run.id);
    const other = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true });
    await fx.service.engine.stopRun(other.id);
    await expect(fx.service.engine.submitQuestion(other.id, { text: 'Still there?', author: 'alice', idempotencyKey: 'k-2' })).rejects.toThrow(/already been stopped/);
    await expect(fx.service.engine.resumeRun(other.id)).rejects.toThrow(/already been stopped/);
  });
});

describe('convergence and people', () => {
  it("a person's question between stops starts the count afresh", async () => {
    fx.service = await startEngine({ store: fx.db.store, dataDir: fx.dataDir, env: { KERNELSEEK_CONVERGE_STOPS: '2' }, server: { fallback: () => endTurn('Finished.') } });
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', questionTimeoutSeconds: 600 });
    await waitFor('the first decision point', fx.runOf(run.id), (r) => r?.status === 'waiting');
    await fx.service.engine.submitQuestion(run.id, { text: 'What limits you?', author: 'alice', idempotencyKey: 'q1' });
    // Stop 1, the person's question, stop (1 again), waiting: without the reset it would have converged.
    await waitFor('the second decision point', async () => (await fx.db.store.runs.get(run.id))!.status === 'waiting' && fx.service!.server.requests.length === 2, Boolean);
    expect((await fx.db.store.runs.get(run.id))!.endReason).toBeNull();
    await fx.service.engine.askFromBankNow(run.id);
    const done = await waitFor('converged', fx.runOf(run.id), (r) => r?.status === 'finished');
    expect(done!.endReason).toBe('converged');
    expect(fx.service.server.requests).toHaveLength(3);
  });
});
