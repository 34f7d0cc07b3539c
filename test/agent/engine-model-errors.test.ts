import { describe, expect, it } from 'vitest';
import { creditBalance, endTurn, quotaExhausted } from '../support/anthropic/script.js';
import { closedPort } from '../support/net.js';
import { useServiceFixture } from '../support/fixture.js';
import { startEngine, waitFor, type EngineHarness } from './helpers.js';

// The engine stops a run on a model failure a person must fix, says why once, and continues it
// when asked after the fix.
const fx = useServiceFixture<EngineHarness>('pglite', 'ks-model-errors-');

const errors = (h: EngineHarness) => h.events.filter((e) => e.event === 'error').map((e) => e.data as unknown as { message: string; fatal: boolean });

describe('model failures end the run with their reason', () => {
  it('an unreachable API fails the run once, fast, with the URL and the cause; nothing is retried as a turn', async () => {
    const port = await closedPort();
    fx.service = await startEngine({ store: fx.db.store, dataDir: fx.dataDir, env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` } });
    const started = Date.now();
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true });
    const done = await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'failed', 20_000);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(done!.endReason).toBe('model_unreachable');
    expect(done!.error).toMatch(new RegExp(`^Cannot reach the model API at http://127\\.0\\.0\\.1:${port}/v1/messages: the connection was refused`));
    await fx.service.scheduler.idle(run.id);
    expect(errors(fx.service).map((e) => [e.message, e.fatal])).toEqual([[done!.error, true]]);
    // One model step, recorded with its three attempts.
    const steps = await fx.db.store.transcript.steps(run.id);
    expect(steps).toHaveLength(1);
    expect((steps[0]!.request as { attempts: number }).attempts).toBe(3);
  });

  it('credit balance and quota stop the run under their names, and resume continues it after the fix', async () => {
    fx.service = await startEngine({ store: fx.db.store, dataDir: fx.dataDir, server: { script: [creditBalance(), quotaExhausted()], fallback: () => endTurn('Finished.') } });
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true, budgets: { steps: 2 } });
    const credit = await waitFor('credit balance', fx.runOf(run.id), (r) => r?.status === 'failed');
    expect(credit!.endReason).toBe('credit_balance');
    expect(credit!.error).toMatch(/credit balance is too low/);
    expect(credit!.error).not.toMatch(/KernelSeek bug/);
    expect(fx.service.server.requests).toHaveLength(1);

    await fx.service.scheduler.idle(run.id);
    await fx.service.engine.resumeRun(run.id);
    const quota = await waitFor('quota', fx.runOf(run.id), (r) => r?.status === 'failed' && fx.service!.server.requests.length === 2);
    expect(quota!.endReason).toBe('quota');
    expect(quota!.error).toMatch(/usage quota is used up/);

    await fx.service.scheduler.idle(run.id);
    await fx.service.engine.resumeRun(run.id);
    const done = await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'finished');
    // The same first request, asked again after each fix: nothing lost, nothing doubled.
    expect(fx.service.server.requests[1]!.body.messages).toEqual(fx.service.server.requests[0]!.body.messages);
    expect(fx.service.server.requests[2]!.body.messages).toEqual(fx.service.server.requests[0]!.body.messages);
    expect(done!.endReason).toBe('budget_steps');
  });
});
