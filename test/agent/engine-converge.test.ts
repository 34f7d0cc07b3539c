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

    // Resume (the Slack `resume` reply, `run --resume`) re-opens it with a bank question, at once,
    // while the second end may still be being written (the next test holds it there).
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

// A resume or a reply that lands while a converged run's end is still being written (its summary not
// out yet: a quick run's best checked on every scenario can take minutes) is kept, and the run
// re-opens once the end is out. Before, the rest of the end cleared the re-opened decision point and
// closed its card: the run sat `running` with nothing to do (seen one time in three in CI).
describe('continuing a run whose end is still being written', () => {
  for (const how of ['resume', 'reply'] as const) {
    it(`a ${how} waits for the end and then re-opens the run`, async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let holding = true;
      fx.service = await startEngine({
        store: fx.db.store,
        dataDir: fx.dataDir,
        env: { KERNELSEEK_CONVERGE_STOPS: '2' },
        server: { fallback: () => endTurn('Finished.') },
        hold: (event) => (event === 'runFinished' && holding ? held : undefined),
      });
      const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true });
      await waitFor('the end to be written', async () => fx.service!.events.some((e) => e.event === 'runFinished'), Boolean);
      const ending = (await fx.db.store.runs.get(run.id))!;
      expect(ending.status).toBe('finished');
      expect((ending.state as { ending?: unknown }).ending).toBe(true);
      if (how === 'resume') await fx.service.engine.resumeRun(run.id);
      else expect((await fx.service.engine.submitQuestion(run.id, { text: 'Did you try two rows a warp?', author: 'alice', idempotencyKey: 'k-end' })).created).toBe(true);
      const asked = (await fx.db.store.runs.get(run.id))!;
      expect(asked.status).toBe('finished');
      expect((asked.state as { ending?: unknown }).ending).toBe('reopen');
      holding = false;
      release();
      const requests = fx.service.server.requests.length;
      await waitFor('converged again', fx.runOf(run.id), (r) => r?.status === 'finished' && fx.service!.server.requests.length >= requests + 2);
      const texts = userTexts(fx.service.server.requests[requests]!);
      if (how === 'resume') expect(texts.some((t) => t.startsWith('Question (from the question bank)'))).toBe(true);
      else expect(texts).toContain('Question from alice: Did you try two rows a warp?');
      await fx.service.scheduler.idle(run.id);
      expect((await fx.db.store.runs.get(run.id))!.state).not.toHaveProperty('ending');
      expectConsistentConversation(fx.service.server.requests);
    });
  }
});

// Issue 42: "Finished. The kernel is optimal." is a claimed limit, not a stop; before every decision
// point counted, such a model cycled the bank for 60 requests with no evaluation at all.
describe('convergence of any kind of decision point', () => {
  it('a model that only ever claims the kernel is optimal ends converged within K+1 requests (default K)', async () => {
    fx.service = await startEngine({ store: fx.db.store, dataDir: fx.dataDir, server: { fallback: () => endTurn('Finished. The kernel is optimal.') } });
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true });
    const done = await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'finished');
    expect(done!.endReason).toBe('converged');
    const k = fx.service.config.agent.runs.convergeStops;
    await fx.service.scheduler.idle(run.id);
    expect(fx.service.server.requests.length).toBeLessThanOrEqual(k + 1);
    expect(done!.evalsUsed).toBe(0);
    const triggers = fx.service.events.filter((e) => e.event === 'decisionPoint').map((e) => (e.data as unknown as { decision: { trigger: string } }).decision.trigger);
    expect(triggers.length).toBeGreaterThan(0);
    expect(new Set(triggers)).toEqual(new Set(['claimed_limit']));
    expect(bankQuestions(fx.service)).toBe(k - 1);
  });

  it('mixed stops and claims count as one streak', async () => {
    let n = 0;
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_CONVERGE_STOPS: '3' },
      server: { fallback: () => endTurn(++n % 2 ? 'Done, I think.' : 'This is memory-bound; it cannot be made faster.') },
    });
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true });
    const done = await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'finished');
    expect(done!.endReason).toBe('converged');
    expect(fx.service.server.requests).toHaveLength(3);
  });
});

describe('the request cap', () => {
  it('ends a run whose model only talks (commands, views) and never evaluates, after KERNELSEEK_STEPS_PER_EVAL requests', async () => {
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_STEPS_PER_EVAL: '4' },
      server: { fallback: () => reply(toolUse('str_replace_based_edit_tool', { command: 'view', path: 'kernel.cpp' })) },
    });
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true });
    const done = await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'finished');
    expect(done!.endReason).toBe('no_evaluation');
    expect(fx.service.server.requests).toHaveLength(4);
    expect(done!.error).toMatch(/made 4 model requests without evaluating a candidate \(the cap is 4, KERNELSEEK_STEPS_PER_EVAL\)/);
    // Said where people look, and re-openable like a converged run.
    expect(fx.service.events.some((e) => e.event === 'error' && String((e.data as { message?: string }).message).includes('without evaluating'))).toBe(true);
    await fx.service.scheduler.idle(run.id);
    await fx.service.engine.submitQuestion(run.id, { text: 'Evaluate what you have.', author: 'alice', idempotencyKey: 'cap-1' });
    await waitFor('the question to reach the model', async () => fx.service!.server.requests.length, (n) => n >= 5);
    expect(userTexts(fx.service.server.requests[4]!)).toContain('Question from alice: Evaluate what you have.');
    // The cap counts afresh from the re-opening: four more requests, then it ends again.
    const again = await waitFor('the cap again', fx.runOf(run.id), (r) => r?.status === 'finished' && fx.service!.server.requests.length >= 8);
    expect(again!.endReason).toBe('no_evaluation');
    expect(fx.service.server.requests).toHaveLength(8);
  });

  it('a person answering every stop does not keep a run that never measures going', async () => {
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_STEPS_PER_EVAL: '3', KERNELSEEK_CONVERGE_STOPS: '50' },
      server: { fallback: () => endTurn('I would rather discuss it first.') },
    });
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', questionTimeoutSeconds: 600 });
    for (let i = 0; i < 3; i++) {
      await waitFor(`decision point ${i + 1}`, fx.runOf(run.id), (r) => r?.status === 'waiting' || r?.status === 'finished');
      if ((await fx.db.store.runs.get(run.id))!.status === 'finished') break;
      await fx.service.engine.submitQuestion(run.id, { text: `Why? (${i})`, author: 'alice', idempotencyKey: `p-${i}` });
      await waitFor('the answer', async () => fx.service!.server.requests.length, (n) => n >= i + 2 || i === 2);
    }
    const done = await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'finished');
    expect(done!.endReason).toBe('no_evaluation');
    expect(fx.service.server.requests).toHaveLength(3);
  });

  it('an evaluation resets it', async () => {
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_STEPS_PER_EVAL: '3' },
      server: {
        script: [
          reply(toolUse('str_replace_based_edit_tool', { command: 'view', path: 'kernel.cpp' })),
          reply(toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: CORRECT }), toolUse('evaluate', { scenarios: 'quick' })),
        ],
        fallback: () => reply(toolUse('str_replace_based_edit_tool', { command: 'view', path: 'kernel.cpp' })),
      },
    });
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true, target: 100 });
    const done = await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'finished');
    expect(done!.endReason).toBe('no_evaluation');
    // Two requests, the evaluation (its request counts before it), then three more.
    expect(fx.service.server.requests).toHaveLength(5);
    expect(done!.evalsUsed).toBe(1);
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
