import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { killAllSpawned, PARENT_WATCHDOG, spawnNode } from '../support/processes.js';
import { waitFor } from './helpers.js';

// Nothing a test starts outlives it: a killed process takes its group with it, and a process whose
// test process died (crash, timeout, vitest killed) ends itself.
afterAll(() => killAllSpawned());

const WORKERS = path.join(REPO_ROOT, 'test', 'agent', 'workers');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('test processes', () => {
  it('killing a spawned process ends what it started too', { timeout: 90_000 }, async () => {
    const idle = spawnNode(path.join(WORKERS, 'idle.ts'), [], { env: process.env });
    const m = await idle.waitFor(/idle (\d+) grandchild (\d+)/, 60_000);
    const grandchild = Number(m[2]);
    expect(alive(grandchild)).toBe(true);
    await idle.kill('SIGKILL');
    await waitFor('the grandchild to end', async () => alive(grandchild), (a) => !a, 10_000);
  });

  it('a spawned process whose parent was killed ends itself and its group', { timeout: 90_000 }, async () => {
    // The spawner plays a test process that dies without cleaning up (SIGKILL: no exit hooks run).
    const spawner = spawn(process.execPath, ['--import', 'tsx', '--import', PARENT_WATCHDOG, path.join(WORKERS, 'spawner.ts')], {
      cwd: REPO_ROOT,
      env: { ...process.env, KS_PARENT_PID: String(process.pid) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    spawner.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor('the spawner to start its child', async () => out, (o) => /child \d+ grandchild \d+/.test(o), 60_000);
    const [, child, grandchild] = /child (\d+) grandchild (\d+)/.exec(out)!.map(Number);
    expect(alive(child!)).toBe(true);
    spawner.kill('SIGKILL');
    await waitFor('the orphaned child and its grandchild to end', async () => alive(child!) || alive(grandchild!), (a) => !a, 10_000);
  });
});
