import { cp, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { createTempDir } from '../support/db.js';

// The container files, the compose file and the systemd units under deploy/ pass the linters this
// machine has (scripts/lint-deploy.sh, which `npm run lint` runs in CI), the lint fails on broken
// copies of them, and the guide that explains them exists and is linked.
const LINT = path.join(REPO_ROOT, 'scripts', 'lint-deploy.sh');
const lint = (dir?: string) => execa('bash', [LINT, ...(dir ? [dir] : [])], { reject: false, env: { ...process.env, LINT_DEPLOY_BUILD: 'no' }, all: true });

describe('deploy/: containers, compose and units', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  beforeAll(async () => {
    tmp = await createTempDir('ks-deploy-');
  });
  afterAll(() => tmp.remove());

  it('pass every linter present here, and the lint names the linters that are absent', async () => {
    const r = await lint();
    expect(r.exitCode, r.all).toBe(0);
    for (const f of ['docker/server.Dockerfile', 'docker/gpu-worker.Dockerfile']) expect(r.all).toContain(`ok    dockerfile-utils lint deploy/${f}`);
    expect(r.all).toContain('ok    compose schema and settings deploy/compose.yaml');
    const hasSystemd = (await execa('systemd-analyze', ['--version'], { reject: false })).exitCode === 0;
    for (const u of ['kernelseek-serve.service', 'kernelseek-gpu-worker.service']) {
      expect(r.all).toContain(hasSystemd ? `ok    systemd-analyze verify deploy/systemd/${u}` : 'SKIP  systemd-analyze');
    }
    // Nothing passes silently: a linter that is not here is said to be absent.
    const hasHadolint = (await execa('hadolint', ['--version'], { reject: false })).exitCode === 0;
    if (!hasHadolint) expect(r.all).toMatch(/SKIP {2}hadolint \(/);
    expect(r.all).toMatch(/SKIP {2}a container engine \(docker info does not answer here\): the server image was not built|ok {4}docker build/);
  });

  it('fails on broken copies, naming each problem: an unknown instruction, a unit key, a misspelt setting, a compose key', async () => {
    const dir = path.join(tmp.dir, 'deploy');
    await cp(path.join(REPO_ROOT, 'deploy'), dir, { recursive: true });
    const dockerfile = path.join(dir, 'docker', 'server.Dockerfile');
    await writeFile(dockerfile, `${await readFile(dockerfile, 'utf8')}\nEXPOS 3000\n`);
    const unit = path.join(dir, 'systemd', 'kernelseek-serve.service');
    await writeFile(unit, (await readFile(unit, 'utf8')).replace('Restart=on-failure', 'Restart=sometimes\nRestartSecs=5'));
    const compose = path.join(dir, 'compose.yaml');
    await writeFile(compose, (await readFile(compose, 'utf8')).replace('KERNELSEEK_WORKER_GRACE: 5m', 'KERNELSEEK_WORKER_GRACE: 5m\n      KERNELSEEK_RESULTKEY: oops').replace('    image: kernelseek-server:local\n', '    image: kernelseek-server:local\n    comand: ["x"]\n'));
    const r = await lint(dir);
    expect(r.exitCode).toBe(1);
    expect(r.all).toMatch(/FAIL {2}dockerfile-utils lint .*server\.Dockerfile\n[\s\S]*Unknown instruction: EXPOS/);
    expect(r.all).toMatch(/KERNELSEEK_RESULTKEY is not a setting KernelSeek reads/);
    expect(r.all).toMatch(/must NOT have additional properties \(comand\)/);
    const hasSystemd = (await execa('systemd-analyze', ['--version'], { reject: false })).exitCode === 0;
    if (hasSystemd) expect(r.all).toMatch(/FAIL {2}systemd-analyze verify .*kernelseek-serve\.service\n[\s\S]*(Unknown key 'RestartSecs'|restart specifier)/);
    expect(r.all).toContain('problems found: fix the lines marked FAIL');
  });

  it('build images that run as a user of their own, on an official CUDA image with the Python packages pinned', async () => {
    for (const f of ['server.Dockerfile', 'gpu-worker.Dockerfile']) {
      const text = await readFile(path.join(REPO_ROOT, 'deploy', 'docker', f), 'utf8');
      const users = [...text.matchAll(/^USER (\S+)$/gm)].map((m) => m[1]);
      expect(users, f).toEqual(['kernelseek']);
      expect(text, f).toMatch(/apt-get install [^\n]*bubblewrap/);
      // The whole harness goes in: its files are the harness version workers must match.
      expect(text, f).toMatch(/^COPY harness \.\/harness$/m);
    }
    expect(await readFile(path.join(REPO_ROOT, 'deploy', 'docker', 'gpu-worker.Dockerfile'), 'utf8')).toMatch(/^FROM nvidia\/cuda:\d+\.\d+\.\d+-devel-ubuntu\d+\.\d+$/m);
    const requirements = (await readFile(path.join(REPO_ROOT, 'deploy', 'gpu-worker', 'requirements.txt'), 'utf8')).split('\n').filter((l) => l.trim() && !l.startsWith('#'));
    expect(requirements.map((l) => l.split('==')[0]).sort()).toEqual(['PyYAML', 'numpy', 'torch']);
    for (const l of requirements) expect(l).toMatch(/^[A-Za-z]+==\d+\.\d+\.\d+(\+cu\d+)?$/);
    // .dockerignore keeps harness/ whole (less what git ignores there too).
    const ignored = (await readFile(path.join(REPO_ROOT, '.dockerignore'), 'utf8')).split('\n').filter((l) => l.trim() && !l.startsWith('#'));
    expect(ignored.filter((l) => l.startsWith('harness'))).toEqual([]);
  });

  it('are explained in docs/deploy.md, which the README links', async () => {
    const guide = await readFile(path.join(REPO_ROOT, 'docs', 'deploy.md'), 'utf8');
    const readme = await readFile(path.join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('(docs/deploy.md)');
    const files = (await readdir(path.join(REPO_ROOT, 'deploy'), { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => path.relative(REPO_ROOT, path.join(e.parentPath, e.name)));
    for (const f of files) expect(guide, f).toContain(f);
    for (const heading of ['## The layout', '## The server', '## A GPU host', '## The Slack app', '## Upgrades', '## Backups', '## What to watch', '## kernelseek doctor']) expect(guide).toContain(heading);
  });
});
