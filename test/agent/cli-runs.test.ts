import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, type Env } from '../../src/config/index.js';
import { createStore, openDatabase } from '../../src/db/index.js';
import { runKernelseek } from '../support/cli.js';
import { createTempDir } from '../support/db.js';
import { newRunInput } from '../support/factories.js';

// `kernelseek runs` on the embedded database: the columns, the derived `interrupted`, the filters,
// and what a bad option or an unknown run says.
let tmp: { dir: string; remove(): Promise<void> };
let env: Env;
const ids: Record<string, string> = {};

beforeAll(async () => {
  tmp = await createTempDir('ks-cli-runs-');
  env = { KERNELSEEK_DATA_DIR: tmp.dir, KERNELSEEK_TASKS_DIR: path.join(REPO_ROOT, 'kernels'), LOG_LEVEL: 'silent', ANTHROPIC_API_KEY: 'sk-ant-x' };
  const handle = await openDatabase({ kind: 'pglite', dataDir: path.join(tmp.dir, 'pgdata') });
  await handle.migrate();
  const store = createStore(handle.db);
  const dead = await store.runs.create(newRunInput({ owner: 'alice' }));
  await store.runs.transition(dead.id, 'running');
  await store.runs.update(dead.id, { leaseOwner: 'terminal:box:4242', leaseExpiresAt: new Date(Date.now() - 60_000), evalsUsed: 3, costUsd: 1.234 });
  const converged = await store.runs.create(newRunInput({ owner: 'bob', origin: 'slack', slackChannel: 'CK1', slackThreadTs: '1.1' }));
  await store.runs.transition(converged.id, 'running');
  await store.runs.offerBest(converged.id, 1, 1.5, 0.9);
  await store.runs.transition(converged.id, 'finished', { endReason: 'converged' });
  const waiting = await store.runs.create(newRunInput({ owner: 'carol' }));
  await store.runs.transition(waiting.id, 'running');
  await store.agentRuns.patchState(waiting.id, { waitingForWorker: 'waiting for a gpu-worker (sm_90): none attached' });
  Object.assign(ids, { dead: dead.id, converged: converged.id, waiting: waiting.id });
  await handle.close();
});
afterAll(async () => {
  await tmp.remove();
});

describe('kernelseek runs', () => {
  it('lists runs with task, status, best, evaluations, cost, owner and where they run', async () => {
    const json = await runKernelseek(['runs', '--json'], env);
    expect(json.stderr).toBe('');
    const rows = JSON.parse(json.stdout) as { id: string; status: string; where: string; best: number | null; costUsd: number; owner: string; waitingFor: string | null }[];
    const by = (id: string) => rows.find((r) => r.id === id)!;
    expect(by(ids.dead!)).toMatchObject({ status: 'interrupted', where: 'terminal:box:4242 (gone)', owner: 'alice', costUsd: 1.234 });
    expect(by(ids.converged!)).toMatchObject({ status: 'finished', endReason: 'converged', best: 1.5, where: 'slack CK1' });
    expect(by(ids.waiting!)).toMatchObject({ status: 'running', waitingFor: 'waiting for a gpu-worker (sm_90): none attached' });

    const table = await runKernelseek(['runs'], env);
    expect(table.stdout).toMatch(new RegExp(`${ids.dead}\\s+cpu_softmax\\s+interrupted\\s+-\\s+3/50\\s+\\$1\\.23\\s+alice\\s+terminal:box:4242 \\(gone\\)`));
    expect(table.stdout).toMatch(new RegExp(`${ids.converged}\\s+cpu_softmax\\s+finished \\(converged\\)\\s+1\\.50x`));
    expect(table.stdout).toContain('running: waiting for a gpu-worker (sm_90): none attached');
  });

  it('filters by status, including interrupted and live, and refuses an unknown one', async () => {
    const interrupted = JSON.parse((await runKernelseek(['runs', '--json', '--status', 'interrupted'], env)).stdout) as { id: string }[];
    expect(interrupted.map((r) => r.id)).toEqual([ids.dead]);
    const live = JSON.parse((await runKernelseek(['runs', '--json', '--status', 'live'], env)).stdout) as { id: string }[];
    expect(live.map((r) => r.id).sort()).toEqual([ids.dead, ids.waiting].sort());
    const finished = JSON.parse((await runKernelseek(['runs', '--json', '--status', 'finished,stopped'], env)).stdout) as { id: string }[];
    expect(finished.map((r) => r.id)).toEqual([ids.converged]);
    const bad = await runKernelseek(['runs', '--status', 'done'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--status done: give one or more of queued, running, .*interrupted, live/);
    const none = await runKernelseek(['runs', '--status', 'paused'], env);
    expect(none.stdout).toMatch(/No runs with status paused/);
  });

  it('run --resume names an unknown run and refuses a task with it', async () => {
    const unknown = await runKernelseek(['run', '--resume', 'ks-nosuchrun'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/There is no run 'ks-nosuchrun' in this database .*`kernelseek runs` lists them/);
    const both = await runKernelseek(['run', 'cpu_softmax', '--resume', ids.dead!], env);
    expect(both.stderr).toMatch(/Give either a task \(cpu_softmax\) or --resume/);
    const neither = await runKernelseek(['run'], env);
    expect(neither.stderr).toMatch(/Give a task to start/);
  });
});
