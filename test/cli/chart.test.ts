import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, type Env } from '../../src/config/index.js';
import { endTurn, userTexts } from '../support/anthropic/script.js';
import { startFakeAnthropic, type FakeAnthropic } from '../support/anthropic/server.js';
import { runKernelseek } from '../support/cli.js';
import { createTempDir, createTestDatabase, type TestDatabase } from '../support/db.js';
import { decodePng } from '../digest/png.js';

// `kernelseek chart <run>` and `kernelseek run --from <run>` in-process, on PostgreSQL: a finished
// run with three evaluations is seeded; its chart is drawn (PNG, or the Vega-Lite data with --spec);
// a new run starts from its best kernel in the terminal.
let db: TestDatabase;
let tmp: { dir: string; remove(): Promise<void> };
let server: FakeAnthropic;
let env: Env;
const BEST = '// the best of ks-chart01\nextern "C" int softmax_rows(const float* x, float* y, long r, long c) { return 0; }\n';

beforeAll(async () => {
  db = await createTestDatabase('postgres');
  tmp = await createTempDir('ks-cli-chart-');
  server = await startFakeAnthropic({ fallback: () => endTurn('Reading the history first.') });
  env = {
    DATABASE_URL: db.url!,
    KERNELSEEK_DATA_DIR: tmp.dir,
    KERNELSEEK_TASKS_DIR: path.join(REPO_ROOT, 'kernels'),
    KERNELSEEK_PYTHON: '/usr/bin/python3',
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: 'sk-ant-cli-test-0000',
    KERNELSEEK_MODEL: 'claude-sonnet-4-6',
    PATH: process.env.PATH,
    USER: 'tester',
    LOG_LEVEL: 'silent',
  };
  const { store } = db;
  const run = await store.runs.create({
    id: 'ks-chart01', task: 'cpu_softmax', owner: 'tester', origin: 'terminal', model: 'claude-sonnet-4-6', target: 1.1, questionTimeoutSeconds: 60,
    budgetEvals: 10, budgetSteps: 10, budgetUsd: 1, budgetSeconds: 600,
  });
  for (const [seq, speedup, source] of [[1, 1.25, '// one\n'], [2, null, '// two\n'], [3, 1.5, BEST]] as const) {
    const row = await store.evaluations.createPending({ runId: run.id, seq, task: 'cpu_softmax', candidateHash: `h${seq}`, source, jobId: `eval:${run.id}:${seq}` });
    await store.evaluations.complete(row.id, {
      status: speedup === null ? 'incorrect' : 'ok', correct: speedup !== null, speedupVsBaseline: speedup, speedupVsBestPeer: speedup === null ? null : speedup / 1.25,
      result: speedup === null ? null : { summary: { speedup_vs_baseline_geomean: speedup, speedup_vs_peer_geomean: { torch: speedup / 1.25 }, speedup_vs_baseline_ci: [speedup - 0.05, speedup + 0.05] } },
      gpu: null, arch: null, worker: 'w/0', harnessSeconds: 1, startedAt: new Date(),
    });
    if (speedup !== null) await store.runs.offerBest(run.id, row.id, speedup, speedup / 1.25);
  }
  await store.runs.transition(run.id, 'running');
  await store.runs.transition(run.id, 'finished', { endReason: 'budget_evals' });
});
afterAll(async () => {
  await server.close();
  await db.dispose();
  await tmp.remove();
});

describe('kernelseek chart', () => {
  it("draws a run's chart with its lines, or prints what it plots", async () => {
    const r = await runKernelseek(['chart', 'ks-chart01'], env, { cwd: tmp.dir });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('ks-chart01: 2 counted candidate(s), best 1.50x vs baseline; torch (peer) at 1.25x, goal 1.10x vs torch at 1.38x.');
    expect(r.stderr).toContain(`Chart written to ${path.join(tmp.dir, 'ks-chart01-chart.png')}.`);
    expect(decodePng(await readFile(path.join(tmp.dir, 'ks-chart01-chart.png'))).width).toBe(1600);

    const spec = await runKernelseek(['chart', 'ks-chart01', '--spec'], env, { cwd: tmp.dir });
    const layers = (JSON.parse(spec.stdout) as { layer: { data: { values: { series: string }[] } }[] }).layer;
    expect(layers.map((l) => l.data.values.map((v) => v.series))).toEqual([
      ['baseline (1.00x)', 'torch (peer)', 'goal 1.10x vs torch'],
      ['correct candidates', 'correct candidates'],
      ['best so far', 'best so far', 'best so far'],
      ['correct candidates', 'correct candidates'],
    ]);

    const missing = await runKernelseek(['chart', 'ks-nothere1'], env, { cwd: tmp.dir });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/There is no run 'ks-nothere1'\. `kernelseek runs` lists the runs\./);
  });
});

describe('kernelseek run --from', () => {
  it('starts a new run from the best kernel of another, with its history summarised', async () => {
    const r = await runKernelseek(['run', '--from', 'ks-chart01', '--autonomous', '--budget-steps', '1'], env, { cwd: tmp.dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Run (ks-[a-z0-9]+) on cpu_softmax .*target 1\.1x/);
    expect(r.stdout).toContain('It continues ks-chart01 from its best kernel, with its history summarised for the agent.');
    const [child] = await db.store.runs.childrenOf('ks-chart01');
    expect(child).toMatchObject({ task: 'cpu_softmax', owner: 'tester', status: 'finished' });
    expect(await readFile(path.join(tmp.dir, 'workspaces', child!.id, 'kernel.cpp'), 'utf8')).toBe(BEST);
    expect(userTexts(server.requests[0]!).join('\n')).toContain('This run continues run ks-chart01');

    const both = await runKernelseek(['run', '--from', 'ks-chart01', '--resume', child!.id], env, { cwd: tmp.dir });
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/Give --from .* or --resume .*, not both/);
  }, 60_000);
});
