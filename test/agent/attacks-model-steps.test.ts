import { describe, expect, it } from 'vitest';
import { canReopen } from '../../src/db/index.js';
import { MIN_OUTPUT_TOKENS } from '../../src/agent/turn/step-limits.js';
import { priceOf } from '../../src/agent/model/pricing.js';
import { endTurn, reply, text, toolResultTexts, toolUse } from '../support/anthropic/script.js';
import type { RecordedRequest } from '../support/anthropic/server.js';
import { useServiceFixture } from '../support/fixture.js';
import { expectConsistentConversation, startEngine, waitFor, type EngineHarness } from './helpers.js';

// Issue 39, "one model step is unbounded": a scripted model (the real SDK against the fake server)
// makes 300 tool calls in one message, sends a 128 KiB command, asks for an enormous result, stalls
// its stream, and bills the most it can on a small budget. Each bound answers the model with a
// message, or ends the run with its true reason; never a failed turn or an "interrupted" call.
const fx = useServiceFixture<EngineHarness>('pglite', 'ks-step-limits-');

const errors = (h: EngineHarness) => h.events.filter((e) => e.event === 'error').map((e) => ({ message: e.data.message, fatal: e.data.fatal }));

describe('bounded model steps', () => {
  it('runs the first calls of a 300-call message and answers every other one as refused', async () => {
    const calls = Array.from({ length: 300 }, (_, i) => toolUse('str_replace_based_edit_tool', { command: 'create', path: `f${i}.txt`, file_text: `${i}\n` }));
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      server: {
        script: [
          reply(text('Creating files.'), ...calls),
          reply(toolUse('bash', { command: 'ls f*.txt | wc -l' })),
          endTurn('Done.'),
        ],
      },
    });
    const limit = fx.service.config.agent.stepLimits.maxToolCalls;
    expect(limit).toBeLessThan(300);
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true, budgets: { steps: 3 } });
    const done = await waitFor('the run to end', fx.runOf(run.id), (r) => r?.status === 'finished', 90_000);
    expect(done!.endReason).toBe('budget_steps');

    const requests = fx.service.server.requests;
    const results = toolResultTexts(requests[1]!);
    expect(results).toHaveLength(300);
    expect(results.slice(0, limit).every((r) => !/Refused/.test(r))).toBe(true);
    expect(results[limit]).toMatch(new RegExp(`made 300 tool calls and at most ${limit} run per message`));
    expect(results.slice(limit).every((r) => r.startsWith('Refused, not executed'))).toBe(true);
    // Only the allowed calls ran: the workspace holds exactly that many files.
    expect(toolResultTexts(requests[2]!)[0]!.trim()).toBe(String(limit));
    expectConsistentConversation(requests);
    // The trace lists every call, the refused ones as errors.
    const recorded = await fx.db.store.transcript.toolCalls(run.id);
    expect(recorded.filter((c) => c.isError).length).toBe(300 - limit);
    expect(errors(fx.service)).toEqual([]);
  });

  it('refuses a 128 KiB command with a message, and cuts an enormous tool result to the limit with a note', async () => {
    const huge = `touch ran.txt; : ${'x'.repeat(128 * 1024)}`;
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_MAX_TOOL_RESULT: '4000' },
      server: {
        script: [
          reply(toolUse('bash', { command: huge }), toolUse('bash', { command: "head -c 20000 /dev/zero | tr '\\0' a; echo; echo THE-END" })),
          reply(toolUse('bash', { command: 'ls ran.txt 2>&1 || true' })),
          endTurn('Done.'),
        ],
      },
    });
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true, budgets: { steps: 3 } });
    const done = await waitFor('the run to end', fx.runOf(run.id), (r) => r?.status === 'finished', 60_000);
    expect(done!.endReason).toBe('budget_steps');
    const [refused, big] = toolResultTexts(fx.service.server.requests[1]!);
    const max = fx.service.config.agent.stepLimits.maxCommandBytes;
    expect(refused).toMatch(/^Refused, not executed: the command is 128\.\d KiB and one command may be at most \d+ KiB/);
    expect(max).toBeLessThan(128 * 1024);
    expect(big!.length).toBeLessThanOrEqual(4000);
    expect(big).toMatch(/^a{100}/);
    expect(big).toMatch(/THE-END/);
    expect(big).toMatch(/a tool result is cut to 4000/);
    // The refused command never ran.
    expect(toolResultTexts(fx.service.server.requests[2]!)[0]).toMatch(/No such file/);
    expect(errors(fx.service)).toEqual([]);
  });

  it('aborts a stream that stalls after the idle timeout and asks again; the run carries on', async () => {
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_MODEL_IDLE_TIMEOUT: '1s' },
      server: {
        script: [
          { content: [text('Let me look at the kernel and then'), toolUse('str_replace_based_edit_tool', { command: 'view', path: 'kernel.cpp' })], stallAfterEvents: 3 },
          reply(toolUse('str_replace_based_edit_tool', { command: 'view', path: 'kernel.cpp' })),
          endTurn('Done.'),
        ],
      },
    });
    const started = Date.now();
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true, budgets: { steps: 2 } });
    const done = await waitFor('the run to end', fx.runOf(run.id), (r) => r?.status === 'finished', 30_000);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(done!.endReason).toBe('budget_steps');
    const steps = await fx.db.store.transcript.steps(run.id);
    expect(steps[0]!.request).toMatchObject({ attempts: 2, retries: [{ reason: 'the response stream stalled: no data for 1 s' }] });
    // The stalled attempt had reported its input: it is billed, so it counts in the step.
    const total = (u: { input_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number }) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
    const [stalled, answered] = fx.service.server.requests.map((r) => total(r.usage!));
    expect(steps[0]!.inputTokens + steps[0]!.cacheReadTokens + steps[0]!.cacheWriteTokens).toBe(stalled! + answered!);
    expect(errors(fx.service)).toEqual([]);
    expectConsistentConversation(fx.service.server.requests.filter((r) => !(r.reply && 'stallAfterEvents' in r.reply)));
  });

  it('ends a run whose stream keeps stalling as model_stalled, saying so, and lets it be continued', async () => {
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_MODEL_IDLE_TIMEOUT: '1s' },
      server: { fallback: () => ({ content: [text('Thinking about it')], stallAfterEvents: 2 }) },
    });
    const started = Date.now();
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true });
    const done = await waitFor('the run to fail', fx.runOf(run.id), (r) => r?.status === 'failed', 30_000);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(done!.endReason).toBe('model_stalled');
    expect(done!.error).toMatch(/response stopped arriving 3 times in a row \(no data for 1 s each/);
    expect(done!.error).not.toMatch(/worker|interrupted/i);
    expect(canReopen(done!)).toBe(true);
    await fx.service.scheduler.idle(run.id);
    expect(fx.service.server.requests).toHaveLength(3);
    expect(errors(fx.service)).toEqual([{ message: done!.error, fatal: true }]);
  });

  it('never lets spend pass the dollar budget, even when every response bills its whole output allowance', async () => {
    const model = 'claude-opus-4-6';
    const budget = 1;
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      server: {
        // Each answer is billed the most a request allows: its whole max_tokens.
        fallback: (req: RecordedRequest) => ({ content: [text('Looking again.'), toolUse('str_replace_based_edit_tool', { command: 'view', path: 'kernel.cpp' })], outputTokens: Number(req.body.max_tokens) }),
      },
    });
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true, model, budgets: { usd: budget } });
    const done = await waitFor('the run to end', fx.runOf(run.id), (r) => r?.status === 'finished', 60_000);
    expect(done!.endReason).toBe('budget_usd');
    const requests = fx.service.server.requests;
    // At the configured allowance these requests could have billed more than the budget...
    const { price } = priceOf(model);
    const configured = fx.service.config.agent.maxOutputTokens;
    const perRequestOutputUsd = (configured * price.output) / 1e6;
    expect(requests.length * perRequestOutputUsd).toBeGreaterThan(budget);
    // ...so the last one asked for less, and none was sent once even the least was unaffordable.
    expect(requests.at(-1)!.body.max_tokens).toBeLessThan(configured);
    expect(Number(requests.at(-1)!.body.max_tokens)).toBeGreaterThanOrEqual(MIN_OUTPUT_TOKENS);
    expect(done!.costUsd).toBeLessThanOrEqual(budget);
    expect(budget - done!.costUsd).toBeLessThan(perRequestOutputUsd);
    const steps = await fx.db.store.transcript.steps(run.id);
    expect(done!.costUsd).toBeCloseTo(steps.reduce((s, x) => s + x.costUsd, 0), 10);
  });
});
