import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../../src/config/index.js';

// No vitest import: the hooks are registered by the test files (see killAllSpawned).

/** The watchdog every spawned node process loads: it ends its process group when its parent dies. */
export const PARENT_WATCHDOG = path.join(REPO_ROOT, 'test', 'support', 'parent-watchdog.ts');

export interface Spawned {
  child: ChildProcess;
  /** stdout and stderr so far, in arrival order. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in the output; rejects on timeout or exit. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Signals the whole process group (the process and whatever it started: tsx, the harness). */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const live = new Set<ChildProcess>();

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** Kills every process group a test started that is still there. Call from afterEach/afterAll. */
export function killAllSpawned(): void {
  for (const child of live) signalGroup(child, 'SIGKILL');
  live.clear();
}

// A test file that fails or times out still ends its processes when its worker exits.
process.once('exit', killAllSpawned);

/**
 * Starts a node script (TypeScript through tsx, in the same process: no wrapper left behind) in a
 * process group of its own, with the parent watchdog loaded, and tracks it until it exits.
 */
export function spawnNode(script: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }): Spawned {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', PARENT_WATCHDOG, script, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...options.env, KS_PARENT_PID: String(process.pid) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  live.add(child);
  let all = '';
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  child.stdout!.on('data', (d: Buffer) => {
    all += d.toString();
    out += d.toString();
    for (const w of waiters) w();
  });
  child.stderr!.on('data', (d: Buffer) => {
    all += d.toString();
    err += d.toString();
    for (const w of waiters) w();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      // Whatever it started goes with it.
      signalGroup(child, 'SIGKILL');
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  return {
    child,
    output: () => all,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = all.match(pattern);
          if (m) {
            cleanup();
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`output did not match ${pattern} within ${timeoutMs} ms:\n${all.slice(-3000)}`));
        }, timeoutMs);
        const onExit = () => {
          check();
          cleanup();
          reject(new Error(`the process exited before its output matched ${pattern}:\n${all.slice(-3000)}`));
        };
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
          child.off('exit', onExit);
        };
        waiters.add(check);
        child.once('exit', onExit);
        check();
      });
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) signalGroup(child, signal);
      await exited;
    },
  };
}
