import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import type { AgentConfig, HarnessConfig } from '../../config/index.js';
import { OutputCap } from './output-cap.js';

/** How the agent's commands are cut off from the network on this host. */
export type NetworkIsolation = { kind: 'unshare'; prefix: string[] } | { kind: 'none'; why: string };

let probed: NetworkIsolation | undefined;

/**
 * Finds a way to run a command without network: `unshare -n` (root or CAP_SYS_ADMIN), else
 * `unshare -rn` (an unprivileged user namespace, where the host allows them). The answer is cached
 * for the process. Where neither works the commands keep the host's network, and callers say so.
 */
export function probeNetworkIsolation(): NetworkIsolation {
  if (probed) return probed;
  for (const prefix of [['unshare', '-n', '--'], ['unshare', '-rn', '--']]) {
    const r = spawnSync(prefix[0]!, [...prefix.slice(1), 'true'], { stdio: 'ignore', timeout: 5000 });
    if (r.status === 0) return (probed = { kind: 'unshare', prefix });
  }
  return (probed = { kind: 'none', why: 'this host allows neither `unshare -n` nor an unprivileged user namespace (`unshare -rn`)' });
}

/**
 * The environment of the agent's commands: only the passthrough variables (PATH, LANG, TERM, CUDA
 * locations), a HOME of the run's own, and the directories of the configured python and nvcc on
 * PATH. Nothing else of this process (API keys, tokens, DATABASE_URL) reaches them.
 */
export function toolEnvironment(agent: AgentConfig, harness: HarnessConfig, homeDir: string): Record<string, string> {
  const env: Record<string, string> = { ...agent.bash.env, HOME: homeDir, TMPDIR: path.join(homeDir, 'tmp') };
  const dirs = (env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(':').filter(Boolean);
  for (const tool of [harness.python, harness.nvcc]) {
    if (tool && path.isAbsolute(tool) && !dirs.includes(path.dirname(tool))) dirs.push(path.dirname(tool));
  }
  env.PATH = dirs.join(':');
  env.LANG ??= 'C.UTF-8';
  env.TERM ??= 'dumb';
  return env;
}

export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  output: string;
  truncated: boolean;
  timedOut: boolean;
  durationMs: number;
}

/**
 * Runs `bash -c command` in `cwd` in its own process group, so a timeout or abort kills everything
 * it started. stdout and stderr are interleaved into one capped output.
 */
export function runCommand(
  command: string,
  options: { cwd: string; env: Record<string, string>; timeoutMs: number; outputCap: number; isolation: NetworkIsolation; signal?: AbortSignal },
): Promise<CommandResult> {
  const started = Date.now();
  const prefix = options.isolation.kind === 'unshare' ? options.isolation.prefix : [];
  const argv = [...prefix, 'bash', '-c', command];
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const cap = new OutputCap(options.outputCap);
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => killGroup();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8').on('data', (d: string) => cap.push(d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => cap.push(d));
    const finish = (exitCode: number | null, signal: string | null) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      // Whatever the command left running in its group goes with it.
      killGroup();
      resolve({ exitCode, signal, output: cap.text(), truncated: cap.truncated, timedOut, durationMs: Date.now() - started });
    };
    child.on('error', (error) => {
      cap.push(`\n[could not start the command: ${error.message}]`);
      finish(null, null);
    });
    child.on('close', (code, signal) => finish(code, signal));
  });
}
