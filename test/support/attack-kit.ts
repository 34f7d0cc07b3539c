import { setTimeout as delay } from 'node:timers/promises';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from '../../src/config/index.js';

/** Tools for the sandbox's attack tests: what a tree holds, what runs on the host, a real CLI process. */

/**
 * Every entry under `root` (relative path → type, mode and content hash or link target), skipping
 * the relative paths `skip` says to: two equal maps mean nothing was written, added or removed.
 */
export async function treeDigest(root: string, skip: (rel: string) => boolean = () => false): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string) => {
    for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(dir, e.name);
      const rel = path.relative(root, full);
      if (skip(rel)) continue;
      const st = await lstat(full);
      if (st.isSymbolicLink()) out.set(rel, `link ${await readlink(full)}`);
      else if (st.isDirectory()) {
        out.set(rel, `dir ${st.mode.toString(8)}`);
        await walk(full);
      } else out.set(rel, `file ${st.mode.toString(8)} ${createHash('sha256').update(await readFile(full)).digest('hex')}`);
    }
  };
  await walk(root);
  return out;
}

/** Host processes whose command line contains `marker` (a sandbox's PID namespace hides them from it). */
export function hostProcesses(marker: string): string[] {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(marker) && !/\bps -eo\b/.test(l));
}

export const sleep = (ms: number): Promise<void> => delay(ms);

/** A marker no other process on the host has in its command line (a sleep's duration). */
export function marker(): string {
  return String(10_000_000 + Math.floor(Math.random() * 80_000_000));
}

/** `kernelseek <args>` as a real process (bin/kernelseek.js), with exactly `env` as its environment. */
export function spawnKernelseek(args: string[], env: Record<string, string>, cwd: string): { child: ChildProcess; done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'kernelseek.js'), ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += String(d)));
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

/** Host `sleep <n>` processes whose duration contains `marker` (not the shells that started them). */
export function sleepers(marker: string): string[] {
  return hostProcesses(marker).filter((l) => /^\s*\d+\s+sleep \d+$/.test(l));
}
