import { execa } from 'execa';
import { CappedOutput } from './capped-output.js';

/**
 * Runs an untrusted-load command (the harness, a gpu_bash command) in a process group of its own,
 * so that everything it starts can be killed at once, and so that nothing it starts outlives us.
 *
 * Two guarantees:
 * - Time limit: at `timeoutMs` the whole group gets SIGKILL (a candidate stuck in a kernel, a
 *   grandchild that ignores SIGTERM, a shell loop in the background all go with it).
 * - Parent death: a small watchdog in the group reads our end of a pipe; when this process dies
 *   (even by SIGKILL, which runs no handlers), the pipe closes and the watchdog kills the group.
 *   Without it, a crashed GPU worker would leave a harness running on the GPU while another worker
 *   runs the same job on it again.
 */

// POSIX sh (bash would read ~/.bashrc: it takes a socket on stdin for a remote shell). $0 is the
// label; "$@" the command. fd 3 keeps the pipe for the watchdog only: the command gets /dev/null as
// stdin and never sees fd 3. A background job's stdin would default to /dev/null, hence `<&3`.
const GUARD_SCRIPT = [
  'exec 3<&0 </dev/null',
  '{ cat <&3 >/dev/null 2>&1; kill -9 0; } >/dev/null 2>&1 &',
  'exec "$@" 3<&-',
].join('\n');

export interface GuardedRunOptions {
  cwd: string;
  /** The complete environment of the command (nothing is inherited). */
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Bytes of output kept (head and tail) per stream, or for both when `mergeOutput`. */
  outputCapBytes?: number;
  /** stdout and stderr into one capture, in arrival order (what a terminal would show). */
  mergeOutput?: boolean;
  /** Called with each complete line of stderr (progress events), before capping. */
  onStderrLine?: (line: string) => void;
  onSpawn?: (pid: number) => void;
  /** After SIGTERM on abort, how long before SIGKILL. */
  killGraceMs?: number;
}

export interface GuardedRunResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  durationMs: number;
  pid: number | undefined;
}

/** Sends a signal to a whole process group; a group that is already gone is not an error. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Splits a byte stream into lines for a callback; the last partial line is flushed at the end. */
function lineSplitter(onLine: (line: string) => void): { push(chunk: Buffer): void; end(): void } {
  let pending = '';
  return {
    push(chunk) {
      pending += chunk.toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        onLine(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
      }
    },
    end() {
      if (pending) onLine(pending);
      pending = '';
    },
  };
}

export async function runGuarded(command: string, args: string[], options: GuardedRunOptions): Promise<GuardedRunResult> {
  const cap = options.outputCapBytes ?? 1 << 20;
  const stdout = new CappedOutput(cap);
  const stderr = options.mergeOutput ? stdout : new CappedOutput(cap);
  const started = Date.now();
  const subprocess = execa('/bin/sh', ['-c', GUARD_SCRIPT, 'kernelseek-guard', command, ...args], {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false,
    detached: true,
    // We kill the group ourselves; execa's own cleanup would only reach the group leader.
    cleanup: false,
    buffer: false,
    reject: false,
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const pid = subprocess.pid;
  if (pid !== undefined) options.onSpawn?.(pid);
  const lines = options.onStderrLine ? lineSplitter(options.onStderrLine) : undefined;
  subprocess.stdout?.on('data', (chunk: Buffer) => stdout.append(chunk));
  subprocess.stderr?.on('data', (chunk: Buffer) => {
    lines?.push(chunk);
    stderr.append(chunk);
  });

  let timedOut = false;
  let aborted = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (pid !== undefined) killGroup(pid, 'SIGKILL');
  }, options.timeoutMs);
  let forceTimer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    aborted = true;
    if (pid === undefined) return;
    killGroup(pid, 'SIGTERM');
    forceTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), options.killGraceMs ?? 2000);
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  // The watchdog may be gone already (killed with the group): a broken pipe is expected then.
  subprocess.stdin?.on('error', () => undefined);
  // The command ended: close the watchdog's pipe, so it kills anything the command left behind.
  subprocess.on('exit', () => subprocess.stdin?.end());

  try {
    const result = await subprocess;
    lines?.end();
    return {
      exitCode: result.exitCode ?? null,
      signal: result.signal ?? null,
      timedOut,
      aborted,
      stdout: stdout.text(),
      stderr: options.mergeOutput ? '' : stderr.text(),
      stdoutTruncated: stdout.truncated,
      stderrTruncated: options.mergeOutput ? false : stderr.truncated,
      durationMs: Date.now() - started,
      pid,
    };
  } finally {
    clearTimeout(timer);
    if (forceTimer) clearTimeout(forceTimer);
    options.signal?.removeEventListener('abort', onAbort);
    subprocess.stdin?.destroy();
  }
}
