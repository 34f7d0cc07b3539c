import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { creditBalance } from '../support/anthropic/script.js';
import { startFakeAnthropic, type FakeAnthropic } from '../support/anthropic/server.js';
import { createTempDir } from '../support/db.js';
import { killAllSpawned, spawnNode } from '../support/processes.js';

// What a person sees in a terminal when the model API cannot be used: one line that names the URL
// (or the account limit) and the cause, within seconds, and no stack trace, at the default log level.
let tmp: { dir: string; remove(): Promise<void> };
let server: FakeAnthropic | undefined;
const KERNELSEEK = path.join(REPO_ROOT, 'bin', 'kernelseek.js');

beforeAll(async () => {
  tmp = await createTempDir('ks-cli-model-errors-');
});
afterEach(() => killAllSpawned());
afterAll(async () => {
  await server?.close();
  await tmp.remove();
});

function run(baseUrl: string, dataDir: string) {
  return spawnNode(KERNELSEEK, ['run', 'cpu_softmax', '--autonomous'], {
    env: {
      KERNELSEEK_DATA_DIR: path.join(tmp.dir, dataDir),
      KERNELSEEK_TASKS_DIR: path.join(REPO_ROOT, 'kernels'),
      KERNELSEEK_PYTHON: '/usr/bin/python3',
      ANTHROPIC_BASE_URL: baseUrl,
      ANTHROPIC_API_KEY: 'sk-ant-cli-test-000',
      KERNELSEEK_MODEL: 'claude-sonnet-4-6',
      PATH: process.env.PATH,
      USER: 'tester',
    },
  });
}

const STACK = /^\s+at .+\(.+:\d+:\d+\)$|^\s+at .+:\d+:\d+$/m;

describe('kernelseek run when the model API cannot be used', () => {
  it('an unreachable API (DNS): one line with the URL and the cause, fast, no stack trace', { timeout: 240_000 }, async () => {
    const p = run('http://api.kernelseek.invalid', 'dns');
    await p.waitFor(/Run ks-[a-z0-9]+ on cpu_softmax/, 180_000);
    const started = Date.now();
    const { code } = await p.exited;
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(code).toBe(1);
    const lines = p.stdout().split('\n').filter((l) => l.includes('Cannot reach the model API'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/error: Cannot reach the model API at http:\/\/api\.kernelseek\.invalid\/v1\/messages: the host name does not resolve \(DNS E(NOTFOUND|AI_AGAIN)/);
    expect(p.stdout()).toMatch(/Run ks-[a-z0-9]+ failed: model_unreachable|Continue it once that is fixed: kernelseek run --resume ks-/);
    expect(p.output()).not.toMatch(STACK);
    expect(p.stdout()).not.toMatch(/will try again on its next turn/);
  });

  it('a credit balance that is too low: named, once, not a KernelSeek bug', { timeout: 240_000 }, async () => {
    server = await startFakeAnthropic({ script: [creditBalance()] });
    const p = run(server.url, 'credit');
    const { code } = await p.exited;
    expect(code).toBe(1);
    expect(p.stdout()).toMatch(/Run ks-[a-z0-9]+ failed: the Anthropic credit balance is too low/);
    expect(p.stdout().split('\n').filter((l) => l.startsWith('[') && /error: .*credit balance is too low/.test(l))).toHaveLength(1);
    expect(p.output()).not.toMatch(/KernelSeek bug/);
    expect(p.output()).not.toMatch(STACK);
    expect(server.requests).toHaveLength(1);
  });
});
