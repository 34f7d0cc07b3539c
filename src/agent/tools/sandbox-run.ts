import { spawn, spawnSync } from 'node:child_process';
import { chownSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { chmod, copyFile, lchown, lstat, mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chownBeneath } from '../../core/safe-read.js';
import { OutputCap } from './output-cap.js';
import { GIT_INDEX_IN_HOME, sandboxArgv, sandboxOwner, type Owner, type SandboxSpec } from './sandbox.js';

export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  output: string;
  truncated: boolean;
  timedOut: boolean;
  durationMs: number;
}

export type SandboxProbe = { ok: true } | { ok: false; why: string };

export const DEFAULT_HOST_PATH = '/usr/local/bin:/usr/bin:/bin';
const probes = new Map<string, SandboxProbe>();

/**
 * Checks once per process (and PATH) that the sandbox works here: bwrap and prlimit found on
 * `hostPath` (the service's PATH: a GPU host carries bwrap outside /usr), user namespaces allowed,
 * and a command inside sees no network and runs as the unprivileged uid.
 */
export function probeSandbox(hostPath: string = DEFAULT_HOST_PATH): SandboxProbe {
  const known = probes.get(hostPath);
  if (known) return known;
  let probed: SandboxProbe;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kernelseek-sandbox-probe-'));
  try {
    const owner = sandboxOwner('probe');
    if (owner) chownSync(dir, owner.uid, owner.gid);
    const argv = sandboxArgv(
      { workspace: dir, env: { PATH: '/usr/bin:/bin' }, gpu: false, readOnly: [], limits: { memoryBytes: 1 << 30, processes: 64, fileBytes: 1 << 20, tmpBytes: 1 << 20 }, owner },
      'id -u; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "',
    );
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 10_000, env: { PATH: hostPath } });
    // 127: the shell that closes inherited descriptors found no prlimit (or unshare) on hostPath.
    const missing = r.status === 127 ? /exec: (\S+): not found/.exec(r.stderr)?.[1] : undefined;
    if (r.error || missing) probed = { ok: false, why: `${missing ?? argv[0]} could not start (${r.error?.message ?? `not found on PATH ${hostPath}`}); install bubblewrap and util-linux (scripts/setup.sh)` };
    else if (r.status !== 0) {
      const first = (r.stderr || r.stdout).trim().split('\n')[0] ?? '';
      const hint = /failed to execute (bwrap|setpriv)/.test(first)
        ? 'install bubblewrap and util-linux: scripts/setup.sh'
        : /unrecognized option|Unknown option/.test(first)
          ? 'bubblewrap 0.8 or later is needed (--disable-userns, --size): scripts/setup.sh'
          : /^unshare:|^mount:/.test(first)
            ? 'a root service stages its sandboxes in a mount namespace of their own, which needs CAP_SYS_ADMIN (a container without it: run the service as a non-root user)'
            : 'does this host allow user namespaces?';
      probed = { ok: false, why: `bubblewrap failed: ${first} (${hint})` };
    }
    else if (r.stdout.trim() !== '65534\nlo') probed = { ok: false, why: `the probe command saw uid/interfaces ${JSON.stringify(r.stdout.trim())}, expected 65534 and only lo` };
    else probed = { ok: true };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  probes.set(hostPath, probed);
  return probed;
}

/**
 * A folder made for one sandbox (gpu_bash's copy of the workspace, its HOME, a bench's folder) is
 * given to the sandbox's uid when the service is root (lchown, no symlink followed), private to it.
 */
export async function giveToSandbox(owner: Owner | null, dirs: string[]): Promise<void> {
  if (!owner) return;
  for (const dir of dirs) {
    await chownBeneath(dir, owner);
    await chmod(dir, 0o700);
  }
}

/**
 * bwrap mounts the git directory on /workspace/.git: whatever the agent left there (a file, a
 * symlink, an old repository) goes first, so the mount point is a plain empty folder. The commands'
 * git gets a copy of the index in their HOME (the git directory is read-only to them), written
 * afresh: whatever was there (a symlink to a trusted file, say) is removed, never written through.
 */
export async function prepareMountPoints(spec: SandboxSpec): Promise<void> {
  if (!spec.gitDir) return;
  const p = path.join(spec.workspace, '.git');
  const st = await lstat(p).catch(() => undefined);
  if (st && !st.isDirectory()) await rm(p, { force: true });
  else if (st) await rm(p, { recursive: true, force: true });
  await mkdir(p);
  if (spec.home) {
    const index = path.join(spec.home, GIT_INDEX_IN_HOME);
    await rm(index, { recursive: true, force: true });
    const copied = await copyFile(path.join(spec.gitDir, 'index'), index, constants.COPYFILE_EXCL).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
        return false;
      },
    );
    // The commands' git writes it (checkout, add).
    if (copied && spec.owner) await lchown(index, spec.owner.uid, spec.owner.gid);
  }
}

/**
 * Runs `bash -c command` in the sandbox (or, with `spec` null — KERNELSEEK_SANDBOX=off — plainly in
 * `plain.cwd`). stdout and stderr are interleaved into one capped output. A timeout or abort kills
 * bwrap, whose death takes every process of the sandbox with it.
 */
export async function runSandboxed(
  command: string,
  options: { spec: SandboxSpec | null; plain?: { cwd: string; env: Record<string, string> }; hostPath?: string; timeoutMs: number; outputCap: number; signal?: AbortSignal },
): Promise<CommandResult> {
  const started = Date.now();
  let argv: string[];
  let cwd: string;
  let env: Record<string, string>;
  if (options.spec) {
    await prepareMountPoints(options.spec);
    argv = sandboxArgv(options.spec, command);
    cwd = options.spec.workspace;
    // Only for finding prlimit and bwrap; the command's environment is the spec's.
    env = { PATH: options.hostPath ?? DEFAULT_HOST_PATH };
  } else {
    if (!options.plain) throw new Error('runSandboxed: no sandbox and no plain settings');
    argv = ['bash', '-c', command];
    ({ cwd, env } = options.plain);
  }
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
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
