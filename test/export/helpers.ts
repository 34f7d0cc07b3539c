import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { REPO_ROOT } from '../../src/config/index.js';
import type { Run, Store } from '../../src/db/index.js';
import { FAST, WRONG } from '../agent/fixtures/kernels.js';
import { newRunInput } from '../support/factories.js';

/**
 * Finished runs as the store holds them, with results the real harness wrote. The fixtures are the
 * harness's JSON for the cpu_softmax task, kept as written (worker paths included, which the
 * evidence must not show):
 *
 *   python3 -m harness eval --task-dir kernels/cpu_softmax --candidate kernel.cpp --scenarios all    (FAST)
 *   python3 -m harness eval --task-dir kernels/cpu_softmax --candidate kernel.cpp --scenarios quick  (FAST)
 *   python3 -m harness eval --task-dir kernels/cpu_softmax --candidate wrong.cpp --scenarios all     (WRONG)
 *
 * (main at 3550409, the development VM, 2026-12-06). A full evaluation takes 17 s there: too long to
 * run per test file.
 */
export type ResultFixture = 'fast.all' | 'fast.quick' | 'wrong.all';

const FILES: Record<ResultFixture, string> = {
  'fast.all': 'fast-softmax.all.result.json',
  'fast.quick': 'fast-softmax.quick.result.json',
  'wrong.all': 'wrong-softmax.all.result.json',
};

export const BASELINE = await readFile(path.join(REPO_ROOT, 'kernels/cpu_softmax/baseline.cpp'), 'utf8');
export { FAST, WRONG };

export async function loadResult(name: ResultFixture): Promise<Record<string, unknown> & { summary: Record<string, unknown>; scenarios: Record<string, unknown>[] }> {
  return JSON.parse(await readFile(path.join(REPO_ROOT, 'test/export/fixtures', FILES[name]), 'utf8')) as never;
}

/** Stores one finished evaluation of `source` with the harness's result `name`; offers it as the run's best when correct. */
export async function storeResult(store: Store, run: Run, seq: number, name: ResultFixture, source: string, options: { best?: boolean } = {}): Promise<number> {
  const result = await loadResult(name);
  const scenarios = name.endsWith('quick') ? 'quick' : 'all';
  const row = await store.evaluations.createPending({ runId: run.id, seq, task: 'cpu_softmax', jobId: `eval:${run.id}:${seq}`, candidateHash: createHash('sha256').update(source).digest('hex'), source, scenarios });
  const summary = result.summary as { speedup_vs_baseline_geomean: number; speedup_vs_peer_geomean: Record<string, number>; best_peer: string | null };
  const correct = result.correct === true;
  await store.evaluations.complete(row.id, {
    status: result.status as 'ok',
    correct,
    speedupVsBaseline: summary.speedup_vs_baseline_geomean,
    speedupVsBestPeer: summary.best_peer ? (summary.speedup_vs_peer_geomean[summary.best_peer] ?? null) : null,
    result,
    gpu: null,
    arch: null,
    worker: 'devvm/cpu',
    harnessSeconds: 12.3,
    startedAt: new Date(),
  });
  if (correct && options.best !== false) await store.runs.offerBest(run.id, row.id, summary.speedup_vs_baseline_geomean, null);
  await store.runs.update(run.id, { evalsUsed: seq });
  return row.id;
}

/**
 * A finished run of cpu_softmax: `full` (eval #1 wrong, eval #2 the fast kernel on every scenario:
 * its best), `quick` (eval #1 the fast kernel on the quick subset: its best, the run on quick), or
 * `none` (one wrong evaluation, no best).
 */
export async function seedFinishedRun(store: Store, kind: 'full' | 'quick' | 'none', fields: Partial<Parameters<Store['runs']['create']>[0]> = {}): Promise<Run> {
  const run = await store.runs.create(newRunInput({ owner: 'alice', ...fields }));
  await store.runs.transition(run.id, 'running');
  if (kind === 'quick') {
    await store.agentRuns.patchState(run.id, { scenarios: 'quick' });
    await storeResult(store, run, 1, 'fast.quick', FAST);
  } else {
    await storeResult(store, run, 1, 'wrong.all', WRONG);
    if (kind === 'full') await storeResult(store, run, 2, 'fast.all', FAST);
  }
  return (await store.runs.transition(run.id, 'finished', { endReason: 'budget_evals' }))!;
}

/** git with no configuration of the person running the tests. */
export function isolatedGit(home: string): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'Team', GIT_AUTHOR_EMAIL: 'team@example.com', GIT_COMMITTER_NAME: 'Team', GIT_COMMITTER_EMAIL: 'team@example.com' };
}

export const GITHUB_REMOTE = 'https://github.com/acme/kernels.git';

/**
 * The team's repository: a bare repository with `main` holding kernels/softmax.cpp (the baseline)
 * and a README, and a git configuration for the person opening the pull request whose `insteadOf`
 * sends GITHUB_REMOTE to it — real git pushes to a real repository, under the GitHub address.
 */
export async function createTeamRepo(dir: string): Promise<{ bare: string; gitconfig: string; env: Record<string, string> }> {
  const bare = path.join(dir, 'team.git');
  const seed = path.join(dir, 'seed');
  const home = path.join(dir, 'home');
  await mkdir(home, { recursive: true });
  const env = isolatedGit(home);
  await execa('git', ['init', '--quiet', '--bare', '--initial-branch=main', bare], { env, extendEnv: false });
  await execa('git', ['init', '--quiet', '--initial-branch=main', seed], { env, extendEnv: false });
  await mkdir(path.join(seed, 'kernels'), { recursive: true });
  await writeFile(path.join(seed, 'kernels', 'softmax.cpp'), BASELINE);
  await writeFile(path.join(seed, 'README.md'), '# Team kernels\n');
  await execa('git', ['add', '-A'], { cwd: seed, env, extendEnv: false });
  await execa('git', ['commit', '--quiet', '-m', 'kernels'], { cwd: seed, env, extendEnv: false });
  await execa('git', ['push', '--quiet', bare, 'main'], { cwd: seed, env, extendEnv: false });
  const gitconfig = path.join(dir, 'gitconfig');
  await writeFile(gitconfig, `[user]\n\tname = Ada Lovelace\n\temail = ada@example.com\n[url "${bare}"]\n\tinsteadOf = ${GITHUB_REMOTE}\n`);
  return { bare, gitconfig, env };
}

/** What a branch of the bare repository holds at `file` (undefined when the branch does not exist). */
export async function showFile(bare: string, branch: string, file: string, env: Record<string, string>): Promise<string | undefined> {
  const r = await execa('git', ['--git-dir', bare, 'show', `${branch}:${file}`], { env, extendEnv: false, reject: false, stripFinalNewline: false });
  return r.exitCode === 0 ? r.stdout : undefined;
}

export async function branchesOf(bare: string, env: Record<string, string>): Promise<string[]> {
  return (await execa('git', ['--git-dir', bare, 'for-each-ref', '--format=%(refname:short)', 'refs/heads'], { env, extendEnv: false })).stdout.split('\n').filter(Boolean).sort();
}

/** A tasks folder holding cpu_softmax with `upstream:` appended to its task.yaml. */
export async function tasksWithUpstream(dir: string, upstream: string): Promise<string> {
  const tasks = path.join(dir, 'kernels');
  await cp(path.join(REPO_ROOT, 'kernels/cpu_softmax'), path.join(tasks, 'cpu_softmax'), { recursive: true });
  const file = path.join(tasks, 'cpu_softmax', 'task.yaml');
  await writeFile(file, `${await readFile(file, 'utf8')}\n${upstream}\n`);
  return tasks;
}
