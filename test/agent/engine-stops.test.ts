import { describe, expect, it } from 'vitest';
import { endTurn, reply, spendLimit, text, toolResultTexts, toolUse, userTexts } from '../support/anthropic/script.js';
import { useServiceFixture } from '../support/fixture.js';
import { expectConsistentConversation, startEngine, waitFor, type EngineHarness } from './helpers.js';

// Every stop reason, the spend limit, compaction under a small context budget, pause and resume.
const fx = useServiceFixture<EngineHarness>('pglite', 'ks-stops-');


describe('stop reasons', () => {
  it('recovers from max_tokens (dropping a cut-off tool call), continues pause_turn, and raises the allowance once', async () => {
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_MAX_OUTPUT_TOKENS: '1000' },
      server: {
        script: [
          { content: [text('Writing a long file.'), toolUse('str_replace_based_edit_tool', { command: 'create', path: 'big.cpp', file_text: 'y'.repeat(500) })], stopReason: 'max_tokens' },
          (req) => {
            expect(req.body.max_tokens).toBe(2000);
            expect(userTexts(req).join()).toMatch(/cut off at the output limit of 1000 tokens and its unfinished tool call was dropped/);
            return { content: [text('Working on it')], stopReason: 'pause_turn' };
          },
          (req) => {
            expect(req.body.max_tokens).toBe(1000);
            expect(req.body.messages.at(-1)!.role).toBe('assistant');
            return reply(toolUse('bash', { command: 'ls big.cpp || echo absent' }));
          },
          (req) => {
            expect(toolResultTexts(req)[0]).toContain('absent');
            return { content: [text('Hmm.')], stopReason: 'stop_sequence' };
          },
        ],
      },
    });
    const run = await fx.service!.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true, budgets: { steps: 4 } });
    const done = await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'finished');
    expect(done!.endReason).toBe('budget_steps');
    expect(fx.service!.server.requests).toHaveLength(4);
    expectConsistentConversation(fx.service!.server.requests);
  });

  it('stops the run with the reason when the model refuses', async () => {
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      server: { script: [{ content: [], stopReason: 'refusal', stopDetails: { type: 'refusal', category: 'cyber', explanation: 'This looks like exploit development.' } }] },
    });
    const run = await fx.service!.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api' });
    const done = await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'stopped');
    expect(done).toMatchObject({ endReason: 'model_refusal', error: 'The model refused to continue: This looks like exploit development.' });
    await waitFor('the error event', async () => fx.service!.events.some((e) => e.event === 'error'), Boolean);
    expect(fx.service!.events.find((e) => e.event === 'error')!.data).toMatchObject({ fatal: true, message: expect.stringContaining('exploit development') });
  });

  it('fails the run with a clear message on a spend limit, without retrying', async () => {
    fx.service = await startEngine({ store: fx.db.store, dataDir: fx.dataDir, server: { script: [spendLimit()] } });
    const run = await fx.service!.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api' });
    const done = await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'failed');
    expect(done!.endReason).toBe('spend_limit');
    expect(done!.error).toMatch(/spend or billing limit was reached/);
    expect(fx.service!.server.requests).toHaveLength(1);
    await waitFor('the final summary', async () => fx.service!.events.some((e) => e.event === 'runFinished'), Boolean);
    const summary = fx.service!.events.find((e) => e.event === 'runFinished')!.data as unknown as { summary: { status: string; error: string } };
    expect(summary.summary).toMatchObject({ status: 'failed', error: expect.stringMatching(/spend/) });
  });

  it('compacts old tool results when a request would exceed the context budget, and retries after the window is exceeded', async () => {
    const budget = 6000;
    let step = 0;
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_CONTEXT_BUDGET: String(budget) },
      server: {
        fallback: () => {
          step++;
          if (step === 9) return { content: [text('partial')], stopReason: 'model_context_window_exceeded' };
          return reply(toolUse('bash', { command: `head -c 3000 /dev/zero | tr '\\0' 'a'; echo " step ${step}"` }));
        },
      },
    });
    const run = await fx.service!.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', budgets: { steps: 14 } });
    await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'finished', 60_000);
    const sizes = fx.service!.server.requests.map((r) => Math.ceil(JSON.stringify({ system: r.body.system, tools: r.body.tools, messages: r.body.messages }).length / 3.5));
    expect(Math.max(...sizes), JSON.stringify(sizes)).toBeLessThanOrEqual(budget);
    const state = (await fx.db.store.runs.get(run.id))!.state as { compaction: { throughSeq: number; note: string } | null };
    expect(state.compaction?.throughSeq).toBeGreaterThan(1);
    const last = JSON.stringify(fx.service!.server.requests.at(-1)!.body.messages);
    expect(last).toContain('compacted to save context');
    expect(last).toContain('Evaluation history:');
    expect(last).toContain('Task: cpu_softmax');
    // The step cut short by the window was dropped and asked again after compacting harder.
    const steps = await fx.db.store.transcript.steps(run.id);
    expect(steps.find((s) => s.stopReason === 'model_context_window_exceeded')).toBeTruthy();
  });
});

describe('pause and resume', () => {
  it('pauses at the next step boundary, holds no turn, and resumes where it stopped', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      server: {
        script: [
          async () => {
            await gate;
            return reply(toolUse('bash', { command: 'echo one' }));
          },
          (req) => (expect(toolResultTexts(req)[0]).toContain('one'), endTurn('ok')),
        ],
      },
    });
    const run = await fx.service!.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true, budgets: { steps: 2 } });
    await waitFor('the first call', async () => fx.service!.server.requests.length, (n) => n === 1);
    await fx.service!.engine.pauseRun(run.id);
    release();
    await fx.service!.scheduler.idle(run.id);
    const paused = await fx.db.store.runs.get(run.id);
    expect(paused!.status).toBe('paused');
    expect(fx.service!.server.requests).toHaveLength(1);
    expect(fx.service!.scheduler.delayed()).toEqual([]);
    await fx.service!.engine.resumeRun(run.id);
    const done = await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'finished');
    expect(done!.endReason).toBe('budget_steps');
    expectConsistentConversation(fx.service!.server.requests);
  });
});
