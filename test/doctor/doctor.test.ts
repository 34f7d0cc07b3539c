import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, type Env } from '../../src/config/index.js';
import type { CheckLine } from '../../src/doctor/index.js';
import { manifestScopes } from '../../src/doctor/services.js';
import { startFakeAnthropic, type FakeAnthropic } from '../support/anthropic/server.js';
import { runKernelseek } from '../support/cli.js';
import { createPostgresDatabase, createTempDir } from '../support/db.js';
import { startFakeSlack, type FakeSlack } from '../support/slack/fake-slack.js';

// `kernelseek doctor` as an operator meets it: every problem of a host at once, each with its fix,
// against the real Redis and PostgreSQL, Slack and Anthropic as local servers behind their URLs.

const KEY = 'b'.repeat(64);
let pg: { url: string; drop(): Promise<void> };
let tmp: { dir: string; remove(): Promise<void> };
let slack: FakeSlack;
let anthropic: FakeAnthropic;
let closedPort: number;
let scopes: string[];

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

function serveEnv(extra: Env = {}): Env {
  return {
    PATH: process.env.PATH,
    DATABASE_URL: pg.url,
    REDIS_URL: 'redis://127.0.0.1:6379',
    KERNELSEEK_DATA_DIR: path.join(tmp.dir, 'data'),
    KERNELSEEK_RESULT_KEY: KEY,
    SLACK_BOT_TOKEN: 'xoxb-doctor-test',
    SLACK_SIGNING_SECRET: 'signing-secret',
    SLACK_API_URL: slack.apiUrl,
    ANTHROPIC_API_KEY: 'sk-ant-good',
    ANTHROPIC_BASE_URL: anthropic.url,
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

async function doctor(args: string[], env: Env): Promise<{ code: number; checks: CheckLine[]; stderr: string }> {
  const r = await runKernelseek(['doctor', '--json', ...args], env, { cwd: tmp.dir });
  if (!r.stdout.trim()) throw new Error(`doctor printed nothing (exit ${r.code}): ${r.stderr}`);
  return { code: r.code, checks: (JSON.parse(r.stdout) as { checks: CheckLine[] }).checks, stderr: r.stderr };
}
const named = (checks: CheckLine[], name: string) => checks.filter((c) => c.name === name);
const statusOf = (checks: CheckLine[], name: string) => named(checks, name).map((c) => c.status);

beforeAll(async () => {
  pg = await createPostgresDatabase();
  tmp = await createTempDir('ks-doctor-');
  scopes = await manifestScopes(path.join(REPO_ROOT, 'slack', 'manifest.yaml'));
  slack = await startFakeSlack({ scopes });
  anthropic = await startFakeAnthropic({ models: ['claude-sonnet-4-6'], apiKeys: ['sk-ant-good'] });
  closedPort = await freePort();
});
afterAll(async () => {
  await slack?.close();
  await anthropic?.close();
  await pg?.drop();
  await tmp?.remove();
});

describe('kernelseek doctor --role serve', () => {
  it('says ok for a host that is ready: settings, PostgreSQL, Redis, the Slack token and scopes, the model, git, the sandbox, tasks, disk', async () => {
    const r = await runKernelseek(['doctor', '--check-model'], serveEnv(), { cwd: tmp.dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok {4}Redis: redis:\/\/127\.0\.0\.1:6379: Redis \d+\.\d+/m);
    expect(r.stdout).toMatch(/^ok {4}store: PostgreSQL at .*: server \d+/m);
    expect(r.stdout).toMatch(/^ok {4}Slack token: valid: bot kernelseek \(UKSBOT001\) in KernelSeek Test$/m);
    expect(r.stdout).toMatch(new RegExp(`^ok {4}Slack scopes: every scope slack/manifest\\.yaml asks \\(${scopes.length}\\)$`, 'm'));
    expect(r.stdout).toMatch(/^ok {4}model: claude-sonnet-4-6 answers at http:\/\/127\.0\.0\.1:\d+ \(Fake claude-sonnet-4-6\)$/m);
    expect(r.stdout).toMatch(/^ok {4}sandbox: bubblewrap works/m);
    expect(r.stdout).toMatch(/^ok {4}harness: \d+\.\d+\.\d+\+[0-9a-f]{12} \(\d+ files/m);
    // Every task folder of kernels/, by name (the examples grow).
    const tasks = readdirSync(path.join(REPO_ROOT, 'kernels')).filter((d) => existsSync(path.join(REPO_ROOT, 'kernels', d, 'task.yaml'))).sort();
    expect(tasks).toContain('cpu_softmax');
    expect(r.stdout).toMatch(new RegExp(`^ok {4}tasks: ${tasks.length} in .*kernels: ${tasks.join(', ')}$`, 'm'));
    expect(r.stdout).not.toMatch(/^FAIL/m);
    expect(r.stdout).toMatch(/^\d+ ok, 0 warning\(s\), 0 problem\(s\)$/m);
    expect(slack.callsOf('auth.test').at(-1)?.token).toBe('xoxb-doctor-test');
  });

  it('reports every problem at once, each with its fix: bad and missing settings, no Redis, no database, a short result key', async () => {
    const { code, checks } = await doctor([], {
      ...serveEnv(),
      SLACK_BOT_TOKEN: 'xoxp-a-user-token',
      SLACK_SIGNING_SECRET: undefined,
      ANTHROPIC_API_KEY: undefined,
      REDIS_URL: `redis://127.0.0.1:${closedPort}`,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/kernelseek`,
      KERNELSEEK_RESULT_KEY: 'too-short',
      DIGEST_CRON: '61 25 * * *',
    });
    expect(code).toBe(78);
    const fails = checks.filter((c) => c.status === 'fail');
    expect(fails.map((c) => c.name)).toEqual(['SLACK_BOT_TOKEN', 'DIGEST_CRON', 'SLACK_SIGNING_SECRET', 'ANTHROPIC_API_KEY', 'KERNELSEEK_RESULT_KEY', 'Redis', 'store']);
    for (const f of fails) expect(f.fix, f.name).toMatch(/\w{3,}/);
    expect(named(checks, 'SLACK_BOT_TOKEN')[0]!.detail).toBe('must be a bot token starting with xoxb- (got "xoxp-a-user-token")');
    expect(named(checks, 'Redis')[0]!.detail).toContain(`cannot reach Redis at redis://127.0.0.1:${closedPort}`);
    expect(named(checks, 'store')[0]!.detail).toMatch(new RegExp(`Cannot connect to PostgreSQL at postgres://postgres@127\\.0\\.0\\.1:${closedPort}/kernelseek \\(DATABASE_URL\\): nothing is listening`));
    expect(named(checks, 'KERNELSEEK_RESULT_KEY')[0]!.detail).toMatch(/at least 32 characters \(it has 9\)/);
    // The rest is still checked with the valid settings: the sandbox, git and the tasks.
    expect(statusOf(checks, 'sandbox')).toEqual(['ok']);
    expect(statusOf(checks, 'git')).toEqual(['ok']);
    // The token was invalid in form, so Slack was not asked with it.
    expect(slack.calls.some((c) => c.token === 'xoxp-a-user-token')).toBe(false);
  });

  it('fails a Slack token that Slack refuses, or that lacks scopes the manifest asks, naming them', async () => {
    const before = await doctor([], serveEnv());
    expect(statusOf(before.checks, 'Slack scopes')).toEqual(['ok']);
    const narrow = await startFakeSlack({ scopes: ['commands', 'chat:write', 'files:write'] });
    try {
      const { code, checks } = await doctor([], serveEnv({ SLACK_API_URL: narrow.apiUrl }));
      expect(code).toBe(78);
      expect(named(checks, 'Slack scopes')[0]).toMatchObject({
        status: 'fail',
        detail: `the token lacks ${scopes.filter((x) => !['commands', 'chat:write', 'files:write'].includes(x)).join(', ')}, which slack/manifest.yaml asks`,
        fix: expect.stringContaining('reinstall the app'),
      });
      narrow.fail('auth.test', { error: 'invalid_auth' });
      const refused = await doctor([], serveEnv({ SLACK_API_URL: narrow.apiUrl }));
      expect(named(refused.checks, 'Slack token')[0]).toMatchObject({ status: 'fail', detail: 'Slack refused SLACK_BOT_TOKEN: invalid_auth' });
    } finally {
      await narrow.close();
    }
    const unreachable = await doctor([], serveEnv({ SLACK_API_URL: `http://127.0.0.1:${closedPort}/api/` }));
    expect(named(unreachable.checks, 'Slack token')[0]).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^cannot reach Slack at http:\/\/127\.0\.0\.1:\d+\/api\//) });
  });

  it('checks the model key and model only when asked (--check-model): a refused key, an unknown model', async () => {
    const notAsked = await doctor([], serveEnv({ ANTHROPIC_API_KEY: 'sk-ant-revoked' }));
    expect(named(notAsked.checks, 'model')[0]).toMatchObject({ status: 'ok', detail: expect.stringContaining('key not tried (kernelseek doctor --check-model') });
    const before = anthropic.requests.length;
    const badKey = await doctor(['--check-model'], serveEnv({ ANTHROPIC_API_KEY: 'sk-ant-revoked' }));
    expect(named(badKey.checks, 'model')[0]).toMatchObject({ status: 'fail', detail: expect.stringMatching(/does not accept ANTHROPIC_API_KEY \(HTTP 401\)$/) });
    const unknown = await doctor(['--check-model'], serveEnv({ KERNELSEEK_MODEL: 'claude-nonexistent-1' }));
    expect(named(unknown.checks, 'model')[0]).toMatchObject({ status: 'fail', detail: expect.stringMatching(/has no model claude-nonexistent-1$/), fix: expect.stringContaining('KERNELSEEK_MODEL') });
    // The Models API only: no message was sent, nothing was spent.
    expect(anthropic.requests.length).toBe(before);
  });
});

describe('serve and gpu-worker make the same checks at start', () => {
  it('serve started with three settings missing names all three, starts nothing and exits 78', async () => {
    const r = await runKernelseek(['serve', '--port', '0'], serveEnv({ SLACK_BOT_TOKEN: undefined, SLACK_SIGNING_SECRET: undefined, ANTHROPIC_API_KEY: undefined }), { cwd: tmp.dir });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/^kernelseek serve \(role all\) cannot start: 3 problems:$/m);
    expect(r.stderr).toMatch(/^ {2}- SLACK_BOT_TOKEN: not set: the Slack app needs its bot token$/m);
    expect(r.stderr).toMatch(/^ {2}- SLACK_SIGNING_SECRET: not set, and neither is SLACK_APP_TOKEN/m);
    expect(r.stderr).toMatch(/^ {2}- ANTHROPIC_API_KEY: not set: the agent calls the model with it$/m);
    expect(r.stderr.match(/^ {6}fix: /gm)).toHaveLength(3);
    expect(r.stderr).toMatch(/`kernelseek doctor --role serve` shows every check/);
    expect(r.stdout).not.toContain('KernelSeek serve');
  });

  it('gpu-worker on a host without a GPU: a warning for the cpu queues, a refusal when --arch asks for CUDA', async () => {
    const env = { ...serveEnv(), KERNELSEEK_PYTHON: '/usr/bin/python3' };
    const cpu = await doctor(['--role', 'gpu-worker'], env);
    expect(named(cpu.checks, 'GPU')[0]).toMatchObject({ status: 'warn', detail: expect.stringMatching(/^none found \(nvidia-smi not found\): this worker serves the cpu queues only/) });
    expect(named(cpu.checks, 'Python')[0]).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^\/usr\/bin\/python3 3\.\d+.*torch .*PyYAML .*NumPy /) });
    expect(statusOf(cpu.checks, 'g++')).toEqual(['ok']);
    expect(cpu.code).toBe(0);
    const cuda = await doctor(['--role', 'gpu-worker', '--arch', 'sm_90'], env);
    expect(cuda.code).toBe(78);
    expect(named(cuda.checks, 'GPU')[0]).toMatchObject({ status: 'fail', detail: 'none found (nvidia-smi not found), but --arch sm_90 asks for CUDA jobs: this worker would take none' });
    const started = await runKernelseek(['gpu-worker', '--arch', 'sm_90'], env, { cwd: tmp.dir });
    expect(started.code).toBe(78);
    expect(started.stderr).toMatch(/^kernelseek gpu-worker cannot start: \d+ problems?:\n {2}- GPU: none found \(nvidia-smi not found\), but --arch sm_90 asks for CUDA jobs/m);
    expect(started.stdout).not.toContain('ready');
  });

  it('a GPU host whose toolkit is newer than its driver and whose torch has no CUDA: both fail, with what to install', async () => {
    const bin = path.join(tmp.dir, 'gpu-bin');
    await mkdir(bin, { recursive: true });
    // nvidia-smi as a host with one H100 and a CUDA 12.4 driver answers (no GPU here: the one faked edge).
    await writeFile(
      path.join(bin, 'nvidia-smi'),
      `#!/bin/sh\ncase "$1" in\n  --query-gpu=*) echo "0, NVIDIA H100 80GB HBM3, 550.54.15, 81559, 9.0" ;;\n  *) echo "| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4 |" ;;\nesac\n`,
    );
    await chmod(path.join(bin, 'nvidia-smi'), 0o755);
    const hasNvcc = (await execa('nvcc', ['--version'], { reject: false })).exitCode === 0;
    const { code, checks } = await doctor(['--role', 'gpu-worker'], { ...serveEnv(), PATH: `${bin}:${process.env.PATH}`, KERNELSEEK_PYTHON: '/usr/bin/python3' });
    expect(code).toBe(78);
    expect(named(checks, 'GPU')[0]).toMatchObject({ status: 'ok', detail: '0: NVIDIA H100 80GB HBM3, sm_90, 81559 MiB' });
    expect(named(checks, 'driver')[0]).toMatchObject({ status: 'ok', detail: '550.54.15: runs CUDA 12.4 and older' });
    expect(named(checks, 'nvcc')[0]).toMatchObject(
      hasNvcc
        ? { status: 'fail', detail: expect.stringMatching(/^CUDA toolkit 1[3-9]\.\d+ is newer than the driver runs \(12\.4\): kernels it builds will not load$/) }
        : { status: 'fail', detail: 'nvcc not found on PATH: CUDA candidates cannot be compiled' },
    );
    // This machine's PyTorch is a CPU build: it cannot use the GPU the worker would serve.
    expect(named(checks, 'Python').find((c) => c.status === 'fail')).toMatchObject({ detail: expect.stringMatching(/^torch .* cannot use the GPU/), fix: expect.stringContaining('download.pytorch.org/whl/cu130') });
  });

  it('a host without the harness packages, git or bubblewrap: each named with how to install it', async () => {
    const noSite = path.join(tmp.dir, 'python-no-packages');
    // The system's Python without its site packages: no torch, no PyYAML.
    await writeFile(noSite, '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n');
    await chmod(noSite, 0o755);
    const worker = await doctor(['--role', 'gpu-worker'], { ...serveEnv(), KERNELSEEK_PYTHON: noSite });
    expect(named(worker.checks, 'Python')[0]).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^no interpreter with torch and PyYAML \(.*python-no-packages: missing torch and yaml\)$/) });
    const agent = await doctor(['--role', 'agent'], serveEnv({ PATH: path.join(tmp.dir, 'empty-bin') }));
    expect(agent.code).toBe(78);
    expect(named(agent.checks, 'git')[0]).toMatchObject({ status: 'fail', fix: 'install git (apt-get install git)' });
    expect(named(agent.checks, 'sandbox')[0]).toMatchObject({ status: 'fail', detail: expect.stringMatching(/could not start .*: the agent's commands would be refused$/), fix: expect.stringContaining('apt-get install bubblewrap') });
    const off = await doctor(['--role', 'agent'], serveEnv({ KERNELSEEK_SANDBOX: 'off' }));
    expect(named(off.checks, 'KERNELSEEK_SANDBOX')[0]).toMatchObject({ status: 'warn' });
    expect(named(off.checks, 'sandbox')).toEqual([]);
  });
});

// On a GPU host (none here: the development machines and CI have no GPU, and this says so as a
// skipped test): doctor finds the GPUs, the driver's CUDA version, a toolkit it runs and a PyTorch
// that sees the GPU, and a worker for the GPUs' architecture may start.
const gpuHost = (await execa('nvidia-smi', ['-L'], { reject: false })).exitCode === 0;
describe.skipIf(!gpuHost)(`on a GPU host${gpuHost ? '' : ' (skipped: no nvidia-smi on this machine)'}`, () => {
  it('finds every GPU, the driver, nvcc and a PyTorch that sees the GPU, and fails nothing', async () => {
    const { code, checks } = await doctor(['--role', 'gpu-worker'], { ...serveEnv(), KERNELSEEK_PYTHON: undefined });
    expect(checks.filter((c) => c.status === 'fail')).toEqual([]);
    expect(code).toBe(0);
    expect(named(checks, 'GPU').every((c) => c.status === 'ok' && /sm_\d+/.test(c.detail))).toBe(true);
    expect(named(checks, 'driver')[0]!.detail).toMatch(/runs CUDA \d+\.\d+ and older/);
    expect(named(checks, 'Python')[0]!.detail).toMatch(/CUDA \d+\.\d+, [1-9]\d* GPU\(s\) visible/);
  }, 120_000);
});
