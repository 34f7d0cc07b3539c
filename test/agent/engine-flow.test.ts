import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endTurn, overloaded, rateLimited, reply, text, toolResultTexts, toolUse, userTexts } from '../support/anthropic/script.js';
import { useServiceFixture } from '../support/fixture.js';
import { expectConsistentConversation, startEngine, waitFor, type EngineHarness } from './helpers.js';

// The engine without the harness: file tools, bash, decision points that end a turn, questions,
// budgets and stop reasons, on the embedded database.
const fx = useServiceFixture<EngineHarness>('pglite', 'ks-engine-');


describe('agent engine', () => {
  it('runs tools in the workspace, asks the bank at a stop in autonomous mode, and ends on its step budget', async () => {
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      server: {
        script: [
          reply(text('Reading the kernel.'), toolUse('str_replace_based_edit_tool', { command: 'view', path: 'kernel.cpp' })),
          (req) => {
            expect(toolResultTexts(req)[0]).toContain('softmax_rows');
            return reply(toolUse('bash', { command: 'echo "idea: fewer passes" > NOTES.md && git status --short' }));
          },
          rateLimited(0),
          overloaded(),
          (req) => {
            expect(toolResultTexts(req)[0]).toContain('NOTES.md');
            return endTurn('I have finished.');
          },
          (req) => {
            expect(userTexts(req).join('\n')).toMatch(/^Question \(from the question bank\): .+\?$/m);
            return endTurn('Thinking about it.');
          },
        ],
      },
    });
    const run = await fx.service!.engine.startRun({ task: 'cpu_softmax', owner: 'tester', origin: 'api', autonomous: true, budgets: { steps: 4 } });
    const done = await waitFor('the run to finish', fx.runOf(run.id), (r) => r?.status === 'finished');
    expect(done).toMatchObject({ endReason: 'budget_steps', stepsUsed: 4 });
    expect(fx.service!.server.requests).toHaveLength(6);
    expectConsistentConversation(fx.service!.server.requests);

    const questions = await fx.db.store.questions.forRun(run.id);
    expect(questions).toHaveLength(1);
    expect(questions[0]).toMatchObject({ source: 'bank', trigger: 'stopped', author: 'bank' });
    expect(questions[0]!.deliveredAt).not.toBeNull();
    expect(questions[0]!.bankId).toBeTruthy();

    const calls = await fx.db.store.transcript.toolCalls(run.id);
    expect(calls.map((c) => [c.name, c.isError])).toEqual([
      ['str_replace_based_edit_tool', false],
      ['bash', false],
    ]);
    const steps = await fx.db.store.transcript.steps(run.id);
    // Four model steps; the 429 and the 529 were retried within the third and are listed in it.
    expect(steps).toHaveLength(4);
    expect(steps.every((s) => s.response && !s.error)).toBe(true);
    expect(steps[2]!.request).toMatchObject({ attempts: 3, retries: [{ reason: expect.stringMatching(/^429/) }, { reason: expect.stringMatching(/^529/) }] });
    expect(done!.costUsd).toBeCloseTo(steps.reduce((s, x) => s + x.costUsd, 0), 10);
    expect(done!.costUsd).toBeGreaterThan(0);

    const workspace = path.join(fx.dataDir, 'workspaces', run.id);
    expect(await readFile(path.join(workspace, 'NOTES.md'), 'utf8')).toBe('idea: fewer passes\n');
    await waitFor('the final summary', async () => fx.service!.events.some((e) => e.event === 'runFinished'), Boolean);
    const order = fx.service!.events.map((e) => e.event).filter((e) => e !== 'stepFinished' && e !== 'toolStarted');
    expect(order).toEqual(['statusChanged', 'statusChanged', 'decisionPoint', 'questionAsked', 'statusChanged', 'statusChanged', 'runFinished']);
    const final = fx.service!.events.at(-1)!.data as unknown as { summary: { endReason: string; questions: { bank: number } } };
    expect(final.summary).toMatchObject({ endReason: 'budget_steps', questions: { bank: 1, human: 0 } });
  });

  it('runs gpu_bash against a snapshot of the workspace on the evaluation host; nothing comes back', async () => {
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      server: {
        script: [
          reply(toolUse('gpu_bash', { command: 'head -c 60 kernel.cpp; echo; touch made-on-host.txt; ls', timeout_seconds: 30 })),
          (req) => {
            const [out] = toolResultTexts(req);
            expect(out).toContain('// Baseline for cpu_softmax');
            expect(out).toContain('made-on-host.txt');
            expect(out).toMatch(/\[ran on .*\/local/);
            return reply(toolUse('bash', { command: 'ls made-on-host.txt 2>&1 || true' }));
          },
          (req) => {
            expect(toolResultTexts(req)[0]).toMatch(/No such file/);
            return reply(toolUse('gpu_bash', { command: 'true', timeout_seconds: 99999 }));
          },
          (req) => {
            expect(toolResultTexts(req)[0]).toMatch(/timeout_seconds` must be between 1 and 600/);
            return endTurn('done');
          },
        ],
      },
    });
    const run = await fx.service!.engine.startRun({ task: 'cpu_softmax', owner: 'tester', origin: 'api', autonomous: true, budgets: { steps: 4 } });
    await waitFor('the run to finish', fx.runOf(run.id), (r) => r?.status === 'finished');
    expect(fx.service!.server.requests).toHaveLength(4);
  });
});
