import { chmod, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, REPO_ROOT, type Env } from '../../src/config/index.js';
import { openRunPullRequest, runGit, type GitCall } from '../../src/export/index.js';
import { runKernelseek } from '../support/cli.js';
import { createTempDir, createTestDatabase, type TestDatabase } from '../support/db.js';
import { startFakeGitHub, type FakeGitHub } from '../support/github/fake-github.js';
import { branchesOf, createTeamRepo, FAST, GITHUB_REMOTE, seedFinishedRun, showFile, tasksWithUpstream } from './helpers.js';

// `kernelseek pr` end to end: real git clones and pushes to a real bare repository (which the
// person's git configuration maps the GitHub address onto, with insteadOf), and a scripted GitHub
// REST API server records the pull request. Refusals (quick-only, incorrect, an existing branch) and
// the attacks a repository or an argument could bring.
const TOKEN = 'ghp_TESTTOKEN0123456789abcdefABCDEF012345';
let tmp: { dir: string; remove(): Promise<void> };
let db: TestDatabase;
let github: FakeGitHub;
let team: Awaited<ReturnType<typeof createTeamRepo>>;
let env: Env;
const runs = { full: '', quick: '' };

beforeAll(async () => {
  tmp = await createTempDir('ks-pr-');
  db = await createTestDatabase('postgres');
  team = await createTeamRepo(tmp.dir);
  github = await startFakeGitHub({ repos: { 'acme/kernels': team.bare }, token: TOKEN });
  env = {
    DATABASE_URL: db.url,
    KERNELSEEK_DATA_DIR: path.join(tmp.dir, 'data'),
    KERNELSEEK_TASKS_DIR: path.join(REPO_ROOT, 'kernels'),
    LOG_LEVEL: 'silent',
    PATH: process.env.PATH,
    HOME: path.join(tmp.dir, 'home'),
    GIT_CONFIG_GLOBAL: team.gitconfig,
    GIT_CONFIG_NOSYSTEM: '1',
    GITHUB_TOKEN: TOKEN,
    GITHUB_API_URL: github.url,
  };
  runs.full = (await seedFinishedRun(db.store, 'full')).id;
  runs.quick = (await seedFinishedRun(db.store, 'quick')).id;
});
afterAll(async () => {
  await github?.close();
  await db?.dispose();
  await tmp?.remove();
});

const pr = (args: string[], extra: Env = {}) => runKernelseek(['pr', ...args], { ...env, ...extra }, { cwd: tmp.dir });

describe('kernelseek pr', () => {
  it('pushes a branch with the kernel and opens a pull request whose body is the evidence, naming who asked', async () => {
    const r = await pr([runs.full, '--repo', GITHUB_REMOTE, '--path', 'kernels/softmax.cpp', '--requested-by', 'Grace Hopper']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const branch = `kernelseek/${runs.full}-eval2`;
    expect(r.stdout).toContain(`Pushed ${branch} to ${GITHUB_REMOTE} (from main, commit `);
    expect(r.stdout).toContain('Pull request #1: https://github.com/acme/kernels/pull/1');
    // The branch, really pushed: the kernel at the path, on top of main, nothing else changed.
    expect(await showFile(team.bare, branch, 'kernels/softmax.cpp', team.env)).toBe(FAST);
    expect(await showFile(team.bare, branch, 'README.md', team.env)).toBe('# Team kernels\n');
    const parent = (await execa('git', ['--git-dir', team.bare, 'rev-parse', `${branch}^`, 'main'], { env: team.env, extendEnv: false })).stdout.split('\n');
    expect(parent[0]).toBe(parent[1]);
    const changed = (await execa('git', ['--git-dir', team.bare, 'diff', '--name-only', 'main', branch], { env: team.env, extendEnv: false })).stdout;
    expect(changed).toBe('kernels/softmax.cpp');
    const message = (await execa('git', ['--git-dir', team.bare, 'log', '-1', '--format=%an <%ae>%n%B', branch], { env: team.env, extendEnv: false })).stdout;
    expect(message.split('\n')[0]).toBe('Ada Lovelace <ada@example.com>');
    expect(message).toContain('**Verified** — correct on all 11 scenarios');
    expect(message).toMatch(/\nRequested-by: Grace Hopper\s*$/);
    // The request GitHub got: authenticated, from the branch into main, the evidence as its body.
    expect(github.requests).toHaveLength(1);
    const sent = github.requests[0]!;
    expect(sent).toMatchObject({ method: 'POST', path: '/repos/acme/kernels/pulls', status: 201 });
    expect(sent.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(sent.headers['x-github-api-version']).toBe('2022-11-28');
    expect(sent.body).toMatchObject({ head: branch, base: 'main', draft: false });
    const body = String(sent.body!.body);
    expect(String(sent.body!.title)).toMatch(new RegExp(`^KernelSeek: cpu_softmax: \\d+\\.\\d\\dx vs baseline, \\d+\\.\\d\\dx vs torch \\(verified, ${runs.full} eval #2\\)$`));
    expect(body).toContain('Requested by **Grace Hopper** through KernelSeek');
    expect(body).toContain('**Verified** — correct on all 11 scenarios of the task (the full set)');
    for (const id of ['r64-c128', 'r1-c4096', 'r7-c33', 'r4096-c64', 'r512-c512']) expect(body).toContain(`| ${id} |`);
    expect(body).toMatch(/\| task digest \| `sha256:[0-9a-f]{64}`/);
    expect(body).toContain(`kernelseek export ${runs.full} --eval 2\` writes it as speedups.png`);
    // The token reached GitHub's API and nothing a person reads.
    expect(r.stdout + r.stderr + message + body).not.toContain(TOKEN);
  });

  it('refuses an existing branch: nothing is pushed, the branch keeps its commit, no second request', async () => {
    const branch = `kernelseek/${runs.full}-eval2`;
    const before = (await execa('git', ['--git-dir', team.bare, 'rev-parse', branch], { env: team.env, extendEnv: false })).stdout;
    const r = await pr([runs.full, '--repo', GITHUB_REMOTE, '--path', 'kernels/softmax.cpp']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Branch ${branch} already exists on ${GITHUB_REMOTE}; nothing was pushed. Delete it there, or pass another name with --branch.`);
    expect((await execa('git', ['--git-dir', team.bare, 'rev-parse', branch], { env: team.env, extendEnv: false })).stdout).toBe(before);
    expect(github.requests).toHaveLength(1);
  });

  it('refuses a result measured only on the quick subset, and an incorrect one, before touching the repository', async () => {
    const branches = await branchesOf(team.bare, team.env);
    const quick = await pr([runs.quick, '--repo', GITHUB_REMOTE, '--path', 'kernels/softmax.cpp']);
    expect(quick.code).toBe(1);
    expect(quick.stderr).toContain(`No pull request: ${runs.quick}'s best (eval #1) is measured only on the quick subset (3 of the task's 11 scenarios): not verified. Only a result measured on the task's full set may become a pull request.`);
    const wrong = await pr([runs.full, '--eval', '1', '--repo', GITHUB_REMOTE, '--path', 'kernels/softmax.cpp']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/No pull request: .* \(eval #1\) is not correct: the harness says incorrect, 0 of 11 scenarios correct; .*Only a correct result may become a pull request/);
    expect(await branchesOf(team.bare, team.env)).toEqual(branches);
    expect(github.requests).toHaveLength(1);
  });

  it('keeps the token out of git\'s argv: it travels in the push\'s environment, scoped to the GitHub host; --evidence-files commits the evidence and the body shows the chart', async () => {
    const calls: GitCall[] = [];
    const outcome = await openRunPullRequest({
      config: loadConfig(env, { cwd: tmp.dir }),
      store: db.store,
      runId: runs.full,
      repo: GITHUB_REMOTE,
      path: 'kernels/softmax.cpp',
      branch: 'kernelseek/with-evidence',
      evidenceFiles: true,
      requestedBy: 'Grace Hopper',
      git: async (call) => {
        calls.push(call);
        return runGit(call);
      },
    });
    expect(outcome.pullRequest?.number).toBe(2);
    const basic = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
    for (const c of calls) expect(c.args.join(' ')).not.toMatch(new RegExp(`${TOKEN}|${basic}`));
    const pushes = calls.filter((c) => c.args.includes('push') || c.args.includes('clone') || c.args.includes('ls-remote'));
    expect(pushes).toHaveLength(3);
    for (const c of pushes) expect(c.env).toMatchObject({ GIT_CONFIG_KEY_0: 'http.https://github.com/.extraheader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` });
    for (const c of calls.filter((x) => !pushes.includes(x))) expect(JSON.stringify(c.env)).not.toContain(basic);
    expect(outcome.paths).toEqual(['kernels/softmax.cpp', 'kernels/softmax.cpp.evidence.md', 'kernels/softmax.cpp.evidence.json', 'kernels/softmax.cpp.speedups.png']);
    const evidence = JSON.parse((await showFile(team.bare, 'kernelseek/with-evidence', 'kernels/softmax.cpp.evidence.json', team.env))!) as { verified: boolean; run: { id: string } };
    expect(evidence).toMatchObject({ verified: true, run: { id: runs.full } });
    const body = github.pulls[1]!.body;
    expect(body).toContain(`![Speedup per scenario](https://github.com/acme/kernels/blob/${outcome.commit}/kernels/softmax.cpp.speedups.png?raw=true)`);
  });

  it('takes the repository and path from the task (upstream in task.yaml); a folder path keeps the kernel\'s file name', async () => {
    const tasks = await tasksWithUpstream(path.join(tmp.dir, 'upstream'), `upstream: {repo: "${GITHUB_REMOTE}", path: kernels/cpu/, base: main}`);
    const r = await pr([runs.full, '--branch', 'kernelseek/from-task', '--requested-by', 'Grace Hopper'], { KERNELSEEK_TASKS_DIR: tasks });
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('kernels/cpu/kernel.cpp.');
    expect(await showFile(team.bare, 'kernelseek/from-task', 'kernels/cpu/kernel.cpp', team.env)).toBe(FAST);
    expect(github.pulls.at(-1)).toMatchObject({ head: 'kernelseek/from-task', base: 'main' });
    const missing = await pr([runs.full, '--branch', 'kernelseek/nowhere']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Where does the kernel go? Give --repo and --path, or record it in kernels/cpu_softmax/task.yaml as `upstream: {repo: <git URL>, path: <file or folder/>}`');
  });

  it('a repository that is not on GitHub gets the branch and the command to open the request by hand; GitHub without a token, the page', async () => {
    const requests = github.requests.length;
    const plain = await pr([runs.full, '--repo', team.bare, '--path', 'kernels/softmax.cpp', '--branch', 'kernelseek/plain']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('No pull request was opened: the repository is not on GitHub.');
    expect(plain.stdout).toContain(`git request-pull main ${team.bare} kernelseek/plain`);
    expect(plain.stdout).toContain(`kernelseek export ${runs.full} --eval 2 --format md`);
    expect(await showFile(team.bare, 'kernelseek/plain', 'kernels/softmax.cpp', team.env)).toBe(FAST);
    const tokenless = await pr([runs.full, '--repo', GITHUB_REMOTE, '--path', 'kernels/softmax.cpp', '--branch', 'kernelseek/no-token'], { GITHUB_TOKEN: '' });
    expect(tokenless.code).toBe(0);
    expect(tokenless.stdout).toContain('No pull request was opened: no GITHUB_TOKEN is configured.');
    expect(tokenless.stdout).toContain('Open it at https://github.com/acme/kernels/compare/main...kernelseek%2Fno-token?expand=1');
    expect(github.requests).toHaveLength(requests);
  });

  it('says so when GitHub refuses: the branch is pushed, the request is not, the exit status is 1', async () => {
    github.failNext(403, { message: 'Resource not accessible by personal access token', documentation_url: 'https://docs.github.com/rest' });
    const r = await pr([runs.full, '--repo', GITHUB_REMOTE, '--path', 'kernels/softmax.cpp', '--branch', 'kernelseek/refused']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('No pull request was opened: GitHub answered 403 (Resource not accessible by personal access token): the token cannot open pull requests on acme/kernels.');
    expect(r.stdout).toContain('Open it at https://github.com/acme/kernels/compare/main...kernelseek%2Frefused?expand=1');
    expect(await branchesOf(team.bare, team.env)).toContain('kernelseek/refused');
  });

  it('defeats hostile input: option injection, the ext transport, paths out of the repository, a symbolic link in it', async () => {
    const marker = path.join(tmp.dir, 'pwned');
    const script = path.join(tmp.dir, 'evil.sh');
    await writeFile(script, `#!/bin/sh\ntouch ${marker}\n`);
    await chmod(script, 0o755);
    const injected = await pr([runs.full, `--repo=--upload-pack=${script}`, '--path', 'kernels/softmax.cpp', '--branch', 'kernelseek/attack1']);
    expect(injected.code).toBe(1);
    expect(injected.stderr).toContain('is not a git URL or path (it may not start with - or hold spaces)');
    const ext = await pr([runs.full, '--repo', `ext::${script}`, '--path', 'kernels/softmax.cpp', '--branch', 'kernelseek/attack2']);
    expect(ext.code).toBe(1);
    expect(ext.stderr).toMatch(/could not clone ext::.*transport 'ext' not allowed/);
    const config = loadConfig(env, { cwd: tmp.dir });
    const outs = await Promise.all(
      ['../../outside.cpp', '/etc/kernel.cpp', 'kernels/.git/hooks/post-checkout', 'kernels/.GIT/x'].map((bad) =>
        openRunPullRequest({ config, store: db.store, runId: runs.full, repo: GITHUB_REMOTE, path: bad, branch: 'kernelseek/attack3', requestedBy: 'x' }).then(
          () => `${bad}: accepted`,
          (error: Error) => `${bad}: ${error.message}`,
        ),
      ),
    );
    for (const out of outs) expect(out).toMatch(/: --path must be a relative path inside the repository/);
    // A repository holding a link out of itself: nothing is written through it.
    const outside = path.join(tmp.dir, 'outside');
    await mkdir(outside);
    const seed = path.join(tmp.dir, 'seed');
    await execa('git', ['pull', '--quiet', team.bare, 'main'], { cwd: seed, env: team.env, extendEnv: false });
    await symlink(outside, path.join(seed, 'linked'));
    await execa('git', ['add', 'linked'], { cwd: seed, env: team.env, extendEnv: false });
    await execa('git', ['commit', '--quiet', '-m', 'a link'], { cwd: seed, env: team.env, extendEnv: false });
    await execa('git', ['push', '--quiet', team.bare, 'main'], { cwd: seed, env: team.env, extendEnv: false });
    const linked = await pr([runs.full, '--repo', GITHUB_REMOTE, '--path', 'linked/kernel.cpp', '--branch', 'kernelseek/attack4']);
    expect(linked.code).toBe(1);
    expect(linked.stderr).toContain('linked/kernel.cpp: linked is a symbolic link in the repository; KernelSeek does not write through links.');
    expect(await readdir(outside)).toEqual([]);
    expect(await readdir(tmp.dir)).not.toContain('pwned');
    expect((await branchesOf(team.bare, team.env)).filter((b) => b.includes('attack'))).toEqual([]);
  });
});
