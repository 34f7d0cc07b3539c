import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AgentConfig, HarnessConfig } from '../../config/index.js';
import type { Owner } from '../../core/safe-read.js';

/**
 * The one sandbox for every command the agent causes to run (bash, gpu_bash on the worker host):
 * bubblewrap with its own user, PID, network, IPC and UTS namespaces. `sandboxArgv` is the only
 * place that decides what such a command can reach; everything else calls it.
 */

/** Where the workspace appears inside the sandbox (the same for bash and gpu_bash). */
export const SANDBOX_WORKSPACE = '/workspace';
/** HOME inside the sandbox. */
export const SANDBOX_HOME = '/home/agent';
/** The commands' own copy of the git index, in their HOME (GIT_INDEX_FILE points at it). */
export const GIT_INDEX_IN_HOME = '.kernelseek-git-index';
/** The uid/gid the command runs as inside its user namespace (nobody). */
export const SANDBOX_UID = 65534;

/**
 * The host uids a root service's sandboxes run as: one per run, one per gpu_bash call. Above
 * systemd's container ranges (nspawn's private users end at 0x6FFF0000) and below its reserved top
 * (0x7FFE0000), so no user or container of the host has them; no passwd entry is needed.
 */
export const SANDBOX_HOST_UIDS = { first: 1_900_000_000, count: 1 << 24 } as const;

export type { Owner };

/**
 * Who runs the sandbox named by `key` (a run id; a gpu_bash folder) on this host, when that is not
 * this process: with the service root, every sandbox drops to a uid of its own first (setpriv), so a
 * command is never host root, whatever bubblewrap maps inside (65534 there). Its own, not nobody's:
 * RLIMIT_NPROC counts a uid's processes host-wide, and one run's files are not another's. The
 * workspace and HOME it writes belong to that uid. null: the service is not root, and its sandboxes
 * run as its own unprivileged user.
 */
export function sandboxOwner(key: string): Owner | null {
  if (process.getuid?.() !== 0) return null;
  const uid = SANDBOX_HOST_UIDS.first + (createHash('sha256').update(key).digest().readUInt32BE(0) % SANDBOX_HOST_UIDS.count);
  return { uid, gid: uid };
}

/**
 * Runs first, before prlimit and bwrap: closes every descriptor but stdio that this process got
 * without close-on-exec (from whoever started the service), which bwrap would pass on inside.
 */
const CLOSE_INHERITED_FDS = 'for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-"; done; exec "$@"';

/** Binds each `source stage` pair given before `--` (in a mount namespace of its own), then runs the rest. */
const STAGE_BINDS = 'while [ "$1" != -- ]; do mount --bind "$1" "$2" || exit 125; shift 2; done; shift; exec "$@"';
const STAGE_SLOTS = { workspace: 'w', home: 'h', git: 'g', etc: 'e' } as const;
let stageDir: string | undefined;

/**
 * Where a root service's sandbox finds the folders it binds. bwrap runs as the sandbox's uid, which
 * may not pass through the folders above the data dir (a data dir under /root, a mktemp folder);
 * so, as root, in a private mount namespace of its own (unshare: nothing reaches the host's mount
 * table, and it ends with the sandbox), each folder is first bound onto an empty folder here, which
 * anyone may pass through. Made once per process; one someone else owns is never used.
 */
export function sandboxStage(): string {
  if (stageDir && ownedByUs(stageDir)) return stageDir;
  const base = ['/tmp', os.tmpdir()].find((dir) => {
    try {
      return (statSync(dir).mode & 0o001) !== 0;
    } catch {
      return false;
    }
  }) ?? os.tmpdir();
  let dir = path.join(base, `kernelseek-sandbox-stage-${process.getuid?.() ?? 'u'}`);
  try {
    mkdirSync(dir, { mode: 0o755 });
  } catch {
    // There already: ours, or someone else's (then a folder of our own).
  }
  if (!ownedByUs(dir)) dir = mkdtempSync(path.join(base, 'kernelseek-sandbox-stage-'));
  chmodSync(dir, 0o755);
  for (const slot of Object.values(STAGE_SLOTS)) {
    try {
      mkdirSync(path.join(dir, slot), { mode: 0o755 });
    } catch {
      // There already (made by us: nobody else can write in the folder).
    }
  }
  return (stageDir = dir);
}

export interface SandboxLimits {
  /** RLIMIT_AS in bytes; null: none (CUDA reserves terabytes of address space, so not on a GPU). */
  memoryBytes: number | null;
  /** RLIMIT_NPROC: processes and threads of the sandbox's uid (the kernel exempts host root). */
  processes: number;
  /** RLIMIT_FSIZE in bytes: the largest file a command can write. */
  fileBytes: number;
  /** Size of each of the sandbox's RAM-backed folders, /tmp and /dev/shm (tmpfs). */
  tmpBytes: number;
}

export interface SandboxSpec {
  /** Host folder bound read-write at /workspace. */
  workspace: string;
  /** Host folder bound read-write at /home/agent; absent: an empty tmpfs. */
  home?: string;
  /** The workspace's git directory (kept outside it), bound read-only at /workspace/.git. */
  gitDir?: string;
  /** The complete environment inside (nothing is inherited). */
  env: Record<string, string>;
  /** Bind the NVIDIA device nodes (and /sys read-only, which the driver's tools read). */
  gpu: boolean;
  /** Extra host folders (toolchains outside /usr) bound read-only at the same path. */
  readOnly: string[];
  limits: SandboxLimits;
  /** The host uid it runs as when the service is root (sandboxOwner; the workspace and HOME are its). */
  owner?: Owner | null;
}

// Only these entries of /etc are visible: enough for the loader, compilers, python and locale, and
// nothing that holds a secret (shadow, ssh host keys, ssl private keys, service configs).
const ETC_ALLOWLIST = [
  'alternatives', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'passwd', 'group', 'nsswitch.conf', 'hosts',
  'localtime', 'timezone', 'os-release', 'debian_version', 'mime.types', 'environment', 'protocols', 'services',
  'ssl/certs', 'ca-certificates', 'OpenCL', 'vulkan', 'nvidia', 'gprofng.rc', 'magic', 'inputrc',
];

const TOP_LEVEL = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];

let etcCopy: string | undefined;

/** A folder this process may trust: a real directory, ours, writable by no one else. */
function ownedByUs(dir: string): boolean {
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/**
 * The sandbox's /etc: a copy of the allowlisted entries bound as one read-only mount (two dozen
 * single-file binds cost bwrap ~20 ms a command: it re-reads the mount table for each). The copy is
 * named after what it copies (names, sizes, mtimes), so processes share it and a changed /etc gets a
 * new one; a folder of that name not owned by us is never used (another user could have made it).
 */
export function sandboxEtc(): string {
  if (etcCopy && existsSync(etcCopy)) return etcCopy;
  const names = [...ETC_ALLOWLIST, ...readdirSafe('/etc').filter((n) => /^python3/.test(n))].filter((n) => existsSync(path.join('/etc', n)));
  const hash = createHash('sha256');
  for (const name of names) {
    const st = lstatSync(path.join('/etc', name));
    hash.update(`${name}:${st.size}:${st.mtimeMs}\n`);
  }
  const final = path.join(os.tmpdir(), `kernelseek-sandbox-etc-${process.getuid?.() ?? 'u'}-${hash.digest('hex').slice(0, 16)}`);
  if (ownedByUs(final)) return (etcCopy = final);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kernelseek-sandbox-etc-'));
  for (const name of names) {
    const dest = path.join(dir, name);
    try {
      mkdirSync(path.dirname(dest), { recursive: true });
      cpSync(path.join('/etc', name), dest, { recursive: true, verbatimSymlinks: true, dereference: false });
    } catch {
      // An entry this user cannot read is one the sandbox goes without.
    }
  }
  // Readable by whatever uid runs the sandbox (nothing secret is copied).
  chmodSync(dir, 0o755);
  try {
    renameSync(dir, final);
    return (etcCopy = final);
  } catch {
    // Another process made it first (then use theirs if it is ours), or the name is taken.
    if (ownedByUs(final)) {
      rmSync(dir, { recursive: true, force: true });
      return (etcCopy = final);
    }
    return (etcCopy = dir);
  }
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** /dev/nvidia0…, nvidiactl, nvidia-uvm, nvidia-modeset, /dev/nvidia-caps where they exist. */
export function gpuDeviceNodes(): string[] {
  return readdirSafe('/dev').filter((n) => n.startsWith('nvidia')).map((n) => path.join('/dev', n));
}

/**
 * The host folders a toolchain lives in, to bind read-only: the prefix of an absolute python or nvcc
 * (`/opt/py` for `/opt/py/bin/python3`). Never `/`, never a HOME (the service's secrets live there).
 */
export function toolchainFolders(harness: Pick<HarnessConfig, 'python' | 'nvcc'>, extra: (string | undefined)[] = []): string[] {
  const out = new Set<string>();
  for (const tool of [harness.python, harness.nvcc]) {
    if (!tool || !path.isAbsolute(tool)) continue;
    let real = tool;
    try {
      real = realpathSync(tool);
    } catch {
      continue;
    }
    const prefix = path.dirname(path.dirname(real));
    if (prefix !== '/' && !prefix.startsWith('/usr/') && prefix !== '/usr' && !/^\/(root|home)(\/|$)/.test(prefix)) out.add(prefix);
  }
  for (const dir of extra) if (dir && path.isAbsolute(dir) && existsSync(dir) && !dir.startsWith('/usr')) out.add(dir);
  return [...out];
}

/**
 * The environment inside: the passthrough variables (PATH, LANG, TERM, the CUDA locations), the
 * folders of the configured python and nvcc on PATH, HOME and TMPDIR of the sandbox. Nothing else
 * of this process (API keys, tokens, REDIS_URL, DATABASE_URL) reaches a command.
 */
export function sandboxEnvironment(passthrough: Record<string, string>, harness: Pick<HarnessConfig, 'python' | 'nvcc'>, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { ...passthrough, HOME: SANDBOX_HOME, TMPDIR: '/tmp' };
  const dirs = (env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(':').filter(Boolean);
  for (const tool of [harness.python, harness.nvcc]) {
    if (tool && path.isAbsolute(tool) && !dirs.includes(path.dirname(tool))) dirs.push(path.dirname(tool));
  }
  env.PATH = dirs.join(':');
  env.LANG ??= 'C.UTF-8';
  env.TERM ??= 'dumb';
  return { ...env, ...extra };
}

/** The limits of the deployment's config; `gpu`: no address-space limit (see SandboxLimits). */
export function sandboxLimits(agent: AgentConfig, gpu: boolean): SandboxLimits {
  const s = agent.sandbox;
  return { memoryBytes: gpu ? null : s.memoryMb * 2 ** 20, processes: s.processes, fileBytes: s.fileSizeMb * 2 ** 20, tmpBytes: s.tmpMb * 2 ** 20 };
}

/** A sentence for the system prompt and tool errors: what the commands may use. */
export function describeLimits(limits: SandboxLimits): string {
  const mb = (b: number) => `${Math.round(b / 2 ** 20)} MB`;
  return [
    limits.memoryBytes === null ? null : `${mb(limits.memoryBytes)} of address space per process`,
    `${limits.processes} processes`,
    `files of at most ${mb(limits.fileBytes)}`,
    `/tmp of ${mb(limits.tmpBytes)}`,
  ].filter(Boolean).join(', ');
}

/**
 * The argv that runs `bash -c command` in the sandbox. Inherited descriptors are closed first;
 * prlimit sets the limits on bwrap, which its children inherit; as root, the folders are staged
 * (sandboxStage) and setpriv then drops to the spec's owner with no capability, group or way back (no_new_privs), so bwrap runs unprivileged: its
 * user namespace maps that uid, /proc/sys and every host file are the host's to a stranger, and
 * RLIMIT_NPROC applies (the kernel exempts only root). No user namespace can be made inside
 * (--disable-userns). bwrap's PID namespace has bwrap as init, so when the command's shell exits
 * (or bwrap is killed, or KernelSeek dies: --die-with-parent) the kernel kills every process
 * inside, setsid'd and double-forked ones included.
 */
export function sandboxArgv(spec: SandboxSpec, command: string): string[] {
  const a: string[] = ['/bin/bash', '--noprofile', '--norc', '-c', CLOSE_INHERITED_FDS, 'kernelseek-sandbox'];
  const { limits } = spec;
  a.push('prlimit', `--nproc=${limits.processes}`, `--fsize=${limits.fileBytes}`, '--core=0');
  if (limits.memoryBytes !== null) a.push(`--as=${limits.memoryBytes}`);
  a.push('--');
  // As root, never run as root: a spec without an owner gets one all such specs share.
  const owner = process.getuid?.() === 0 ? (spec.owner ?? sandboxOwner('shared')!) : null;
  const folders = { workspace: spec.workspace, home: spec.home, git: spec.gitDir, etc: sandboxEtc() };
  if (owner) {
    const stage = sandboxStage();
    a.push('unshare', '--mount', '--propagation', 'private', '--', '/bin/bash', '--noprofile', '--norc', '-c', STAGE_BINDS, 'kernelseek-stage');
    for (const [name, slot] of Object.entries(STAGE_SLOTS) as [keyof typeof folders, string][]) {
      const source = folders[name];
      if (!source) continue;
      a.push(source, path.join(stage, slot));
      folders[name] = path.join(stage, slot);
    }
    a.push('--', 'setpriv', `--reuid=${owner.uid}`, `--regid=${owner.gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--');
  }
  a.push('bwrap');
  a.push('--unshare-user', '--disable-userns', '--uid', String(SANDBOX_UID), '--gid', String(SANDBOX_UID));
  a.push('--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  a.push('--die-with-parent', '--new-session', '--hostname', 'sandbox');
  a.push('--ro-bind', '/usr', '/usr');
  for (const name of TOP_LEVEL) {
    const p = `/${name}`;
    let st;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) a.push('--symlink', realpathSync(p).replace(/^\//, ''), p);
    else a.push('--ro-bind', p, p);
  }
  a.push('--ro-bind', folders.etc, '/etc');
  for (const p of spec.readOnly) a.push('--ro-bind-try', p, p);
  // RAM-backed folders have a size: /tmp, /dev/shm; the rest of /dev read-only (it is RAM too).
  const size = String(limits.tmpBytes);
  a.push('--proc', '/proc', '--dev', '/dev', '--size', size, '--tmpfs', '/dev/shm', '--size', size, '--tmpfs', '/tmp');
  if (spec.gpu) {
    for (const node of gpuDeviceNodes()) a.push('--dev-bind', node, node);
    a.push('--ro-bind-try', '/sys', '/sys');
  }
  // After the device binds, which bwrap creates in it.
  a.push('--remount-ro', '/dev');
  if (folders.home) a.push('--bind', folders.home, SANDBOX_HOME);
  else a.push('--dir', SANDBOX_HOME);
  a.push('--bind', folders.workspace, SANDBOX_WORKSPACE);
  if (folders.git) a.push('--ro-bind', folders.git, path.join(SANDBOX_WORKSPACE, '.git'));
  a.push('--chdir', SANDBOX_WORKSPACE, '--clearenv');
  const env = spec.gitDir && spec.home ? { ...spec.env, GIT_INDEX_FILE: path.join(SANDBOX_HOME, GIT_INDEX_IN_HOME) } : spec.env;
  for (const [k, v] of Object.entries(env)) a.push('--setenv', k, v);
  a.push('--', '/bin/bash', '--noprofile', '--norc', '-c', command);
  return a;
}
