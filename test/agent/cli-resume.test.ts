import { setTimeout as delay } from 'node:timers/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, type Env } from '../../src/config/index.js';
import { createStore, openDatabase } from '../../src/db/index.js';
import { endTurn, reply, toolResultTexts, toolUse } from '../support/anthropic/script.js';
import { startFakeAnthropic, type FakeAnthropic, type RecordedRequest, type Reply } from '../support/anthropic/server.js';
import { runKernelseek } from '../support/cli.js';
import { createTempDir } from '../support/db.js';
import { killAllSpawned, spawnNode } from '../support/processes.js';
import { CORRECT } from './fixtures/kernels.js';
import { expectConsistentConversation } from './helpers.js';

// Acceptance (issue 15): `kernelseek run` killed with SIGKILL mid-evaluation leaves its run
// interrupted (its lease expires); `kernelseek run --resume <id>` finishes it, and the store holds
// every step once. Both are real processes on the embedded database, as a person runs them.
let tmp: { dir: string; remove(): Promise<void> };
let server: FakeAnthropic;
const KERNELSEEK = path.join(REPO_ROOT, 'bin', 'kernelseek.js');

beforeAll(async () => {
  tmp = await createTempDir('ks-cli-resume-');
});
afterEach(() => killAllSpawned());
afterAll(async () => {
  await server?.close();
  await tmp.remove();
});

function env(dataDir: string): Env {
  return {
    KERNELSEEK_DATA_DIR: dataDir,
    KERNELSEEK_TASKS_DIR: path.join(REPO_ROOT, 'kernels'),
    KERNELSEEK_PYTHON: '/usr/bin/python3',
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: 'sk-ant-cli-test-000',
    KERNELSEEK_MODEL: 'claude-sonnet-4-6',
    KERNELSEEK_RUN_LEASE: '2s',
    PATH: process.env.PATH,
    USER: 'tester',
    LOG_LEVEL: 'warn',
  };
}

const kernelseek = (args: string[], e: Env) => spawnNode(KERNELSEEK, args, { env: e as NodeJS.ProcessEnv });
const assistants = (req: RecordedRequest) => req.body.messages.filter((m) => m.role === 'assistant').length;

describe('kernelseek run --resume', () => {
  it('keeps the run\'s autonomy and budgets unless new ones are given, says which in its first lines, and refuses what cannot apply', { timeout: 240_000 }, async () => {
    server = await startFakeAnthropic({ fallback: () => endTurn('Finished. The kernel is optimal.') });
    const dataDir = path.join(tmp.dir, 'settings');
    const e = { ...env(dataDir), KERNELSEEK_CONVERGE_STOPS: '2' };
    const first = await runKernelseek(['run', 'cpu_softmax', '--autonomous', '--budget-evals', '9', '--budget-usd', '3', '--question-timeout', '5m'], e);
    expect(first.stderr).toBe('');
    expect(first.stdout.split('\n')[0]).toBe('Starting a run of cpu_softmax…');
    const runId = /Run (ks-[a-z0-9]+) on cpu_softmax/.exec(first.stdout)![1]!;
    expect(first.stdout).toMatch(/finished: converged/);

    // Nothing given: everything kept (before issue 42, --resume ran with a fresh run's defaults silently).
    const kept = await runKernelseek(['run', '--resume', runId], e);
    expect(kept.stderr).toBe('');
    const lines = kept.stdout.split('\n');
    expect(lines[0]).toBe(`Resuming run ${runId}…`);
    expect(lines[1]).toMatch(new RegExp(`^Resuming run ${runId} on cpu_softmax \\(finished, converged\\)`));
    expect(lines[2]).toBe('Settings: autonomous: the bank answers every decision point (kept); model claude-sonnet-4-6 (kept); scenarios all (kept); target 1x (kept).');
    expect(lines[3]).toBe('Budgets: 9 evaluations (kept), 200 steps (kept), $3 (kept), 4h active (kept).');

    // Given: they replace the run's own, and say so.
    const given = await runKernelseek(['run', '--resume', runId, '--no-autonomous', '--question-timeout', '1s', '--budget-evals', '12'], e);
    expect(given.stderr).toBe('');
    expect(given.stdout).toContain('Settings: a decision point waits 1s for your question (given now); model claude-sonnet-4-6 (kept); scenarios all (kept); target 1x (kept).');
    expect(given.stdout).toContain('Budgets: 12 evaluations (given now), 200 steps (kept), $3 (kept), 4h active (kept).');
    const handle = await openDatabase({ kind: 'pglite', dataDir: path.join(dataDir, 'pgdata') });
    try {
      expect(await createStore(handle.db).runs.get(runId)).toMatchObject({ autonomous: false, budgetEvals: 12, budgetUsd: 3, questionTimeoutSeconds: 1 });
    } finally {
      await handle.close();
    }

    // What cannot apply is refused, and nothing changes.
    const quick = await runKernelseek(['run', '--resume', runId, '--scenarios', 'quick'], e);
    expect(quick.code).toBe(1);
    expect(quick.stderr).toMatch(/keeps its scenario set .*kernelseek run --from/);
    const low = await runKernelseek(['run', '--resume', runId, '--budget-steps', '1'], e);
    expect(low.code).toBe(1);
    expect(low.stderr).toMatch(/--budget-steps 1 \(it has used \d+\)/);
  });

  it('finishes a run whose process was killed mid-evaluation, with every step once', { timeout: 540_000 }, async () => {
    server = await startFakeAnthropic({
      fallback: (req): Reply => {
        switch (assistants(req)) {
          case 0:
            return reply(toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: CORRECT }), toolUse('evaluate', {}));
          case 1:
            expect(toolResultTexts(req)[1]).toMatch(/^Evaluation #1 .*: ok; correct on 3\/3/);
            return reply(toolUse('bash', { command: 'echo after-resume' }));
          default:
            return endTurn('done');
        }
      },
    });
    const dataDir = path.join(tmp.dir, 'data');
    const first = kernelseek(['run', 'cpu_softmax', '--autonomous', '--scenarios', 'quick', '--target', '100', '--budget-steps', '3'], env(dataDir));
    const runId = (await first.waitFor(/Run (ks-[a-z0-9]+) on cpu_softmax/, 120_000))[1]!;
    await first.waitFor(/evaluate \(/, 120_000);
    // Inside the evaluation (the harness takes seconds to import torch and compile).
    await delay(800);
    expect(first.output()).not.toMatch(/eval #1/);
    await first.kill('SIGKILL');

    // Once its lease expired (2 s without a heartbeat) the run shows as interrupted; resume finishes it.
    await delay(2500);
    const listed = kernelseek(['runs', '--json'], env(dataDir));
    expect((await listed.exited).code).toBe(0);
    const rows = JSON.parse(listed.stdout()) as { id: string; status: string }[];
    const row = rows.find((r) => r.id === runId);
    if (row?.status !== 'interrupted') {
      // Once seen `queued` under heavy load: what the store holds says which part did not hold (the lease, the status).
      const handle = await openDatabase({ kind: 'pglite', dataDir: path.join(dataDir, 'pgdata') });
      const stored = await createStore(handle.db).runs.get(runId).finally(() => handle.close());
      expect.fail(`listed ${JSON.stringify(row)} at ${new Date().toISOString()}; stored: status ${stored?.status}, lease ${stored?.leaseOwner ?? 'none'} until ${stored?.leaseExpiresAt?.toISOString() ?? '-'}`);
    }

    const second = kernelseek(['run', '--resume', runId], env(dataDir));
    const done = await second.exited;
    expect(second.stderr()).toBe('');
    expect(done.code).toBe(0);
    expect(second.stdout()).toMatch(new RegExp(`Resuming run ${runId} on cpu_softmax \\(interrupted: its process died\\)`));
    // Issue 42: the run's own settings, not a fresh run's defaults, and its first lines say so.
    expect(second.stdout().split('\n')[0]).toBe(`Resuming run ${runId}…`);
    expect(second.stdout()).toContain('Settings: autonomous: the bank answers every decision point (kept); model claude-sonnet-4-6 (kept); scenarios quick (kept); target 100x (kept).');
    expect(second.stdout()).toMatch(/Budgets: 50 evaluations \(kept\), 3 steps \(kept\), \$25 \(kept\), 4h active \(kept\)\./);
    expect(second.stdout()).toMatch(/eval #1: ok, 3\/3 correct/);
    expect(second.stdout()).toMatch(new RegExp(`Run ${runId} finished: the model-step budget is used up`));

    // The store: every step once, no gap, no duplicate; one evaluation under its reserved number.
    const handle = await openDatabase({ kind: 'pglite', dataDir: path.join(dataDir, 'pgdata') });
    try {
      const store = createStore(handle.db);
      const run = (await store.runs.get(runId))!;
      expect(run).toMatchObject({ status: 'finished', endReason: 'budget_steps', evalsUsed: 1, stepsUsed: 3, leaseOwner: null });
      const steps = await store.transcript.steps(runId);
      expect(steps.map((s) => [s.seq, s.response !== null])).toEqual([[0, true], [1, true], [2, true]]);
      const messages = await store.transcript.messages(runId);
      expect(messages.map((m) => m.seq)).toEqual(messages.map((_, i) => i));
      const calls = await store.transcript.toolCalls(runId);
      expect(calls.map((c) => c.name)).toEqual(['str_replace_based_edit_tool', 'evaluate', 'bash']);
      expect(calls.every((c) => c.finishedAt !== null && !c.isError)).toBe(true);
      const evaluations = await store.evaluations.forRun(runId);
      expect(evaluations.map((e) => [e.seq, e.status])).toEqual([[1, 'ok']]);

      const listedAfter = kernelseek(['runs', '--json'], env(dataDir));
      await listedAfter.exited;
      expect((JSON.parse(listedAfter.stdout()) as { id: string; status: string }[]).find((r) => r.id === runId)).toMatchObject({ status: 'finished' });
    } finally {
      await handle.close();
    }
    expect(server.requests).toHaveLength(3);
    expectConsistentConversation(server.requests);
  });
});
