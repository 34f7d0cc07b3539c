import { chmod, lstat, mkdir, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { candidatePathProblem, checkCandidateFiles, type CandidateFiles } from '../../harness/candidate.js';
import { execa } from 'execa';
import { HarnessError } from '../../core/errors.js';
import { chownBeneath, mkdirBeneath, readTextBeneath, removeTree, walkBeneath, writeBeneath } from '../../core/safe-read.js';
import { MAX_SOURCE_BYTES } from '../../queue/payloads.js';
import { sandboxOwner, type Owner } from '../tools/sandbox.js';

/**
 * A run's workspace: a work tree under `<dataDir>/workspaces/<runId>` holding the kernel file (seeded
 * with the task's baseline) and whatever notes the agent writes, and its git directory under
 * `<dataDir>/git/<runId>`, outside the work tree: the agent's commands see it read-only, so nothing
 * they write (hooks, config, fsmonitor, filters) can make the engine's git run code. Every evaluated
 * candidate is committed, so any version can be diffed, restored or exported.
 */
export interface Workspace {
  runId: string;
  /** Real path of the repository root (symlinks resolved): every tool is confined to it. */
  dir: string;
  /** The kernel file's name inside `dir` (task.yaml `kernel.file`), or its folder's (`kernel/`). */
  kernelFile: string;
  /** HOME for the agent's commands, outside the repository. */
  homeDir: string;
  /** The git directory (trusted: only the engine writes it). */
  gitDir: string;
}

const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'KernelSeek',
  GIT_AUTHOR_EMAIL: 'agent@kernelseek.invalid',
  GIT_COMMITTER_NAME: 'KernelSeek',
  GIT_COMMITTER_EMAIL: 'agent@kernelseek.invalid',
  // No system or global config (the service's ~/.gitconfig is not the agent's business either).
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_ATTR_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
};

/**
 * Settings that stop git from running anything a file could name: hooks, fsmonitor, attribute
 * files outside the work tree. Filters and diff drivers need a config entry, and the only config
 * read is the git directory's, which the agent cannot write.
 */
const SAFE_GIT = [
  '-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'core.attributesFile=/dev/null', '-c', 'core.untrackedCache=false', '-c', 'protocol.allow=never',
  // Git's default excludes file is $XDG_CONFIG_HOME/git/ignore: never one the agent could write.
  '-c', 'core.excludesFile=/dev/null',
];

/** The largest single file a commit takes (a kernel and notes, not data). */
export const WORKSPACE_MAX_FILE_BYTES = 10 * 2 ** 20;
/** Files and folders a workspace may hold (the host walks them all to count their size). */
export const WORKSPACE_MAX_ENTRIES = 100_000;

export function workspacePaths(dataDir: string, runId: string) {
  return { dir: path.join(dataDir, 'workspaces', runId), homeDir: path.join(dataDir, 'homes', runId), gitDir: path.join(dataDir, 'git', runId) };
}

async function git(ws: { dir: string; homeDir: string; gitDir: string }, args: string[], pathEnv: string, okCodes: number[] = [0]): Promise<string> {
  const result = await execa('git', [`--git-dir=${ws.gitDir}`, `--work-tree=${ws.dir}`, ...SAFE_GIT, ...args], {
    cwd: ws.dir,
    // HOME is the git directory (only the engine writes it), not the agent's HOME: nothing there is read.
    env: { PATH: pathEnv, HOME: ws.gitDir, ...GIT_IDENTITY },
    extendEnv: false,
    reject: false,
  });
  if (!okCodes.includes(result.exitCode ?? -1)) {
    throw new HarnessError(`git ${args[0]} failed in ${ws.dir}: ${String(result.stderr || result.stdout).trim()}`, { code: 'workspace_git_failed' });
  }
  return String(result.stdout).trim();
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

export interface WorkspaceOptions {
  dataDir: string;
  runId: string;
  kernelFile: string;
  /** PATH for git (the agent's passthrough PATH). */
  pathEnv: string;
}

/**
 * Opens the run's workspace, creating it when absent: `seed` gives the kernel to start from (the
 * baseline for a new run; the last evaluated candidate when a worker on another host resumes a run
 * whose workspace it does not have): one file's `source`, or a folder kernel's `files` (paths inside
 * the folder `kernelFile`). Returns whether it had to be created.
 */
export async function ensureWorkspace(options: WorkspaceOptions, seed: () => Promise<{ source?: string; files?: CandidateFiles; message: string }>): Promise<{ workspace: Workspace; created: boolean }> {
  const { dir, homeDir, gitDir } = workspacePaths(options.dataDir, options.runId);
  const owner = sandboxOwner(options.runId);
  await mkdir(homeDir, { recursive: true, mode: owner ? 0o700 : 0o777 });
  await adoptLegacyGitDir(dir, gitDir);
  const created = !(await exists(path.join(gitDir, 'HEAD')));
  if (created) {
    await mkdir(dir, { recursive: true, mode: owner ? 0o700 : 0o777 });
    await mkdir(path.dirname(gitDir), { recursive: true });
    const { source, files, message } = await seed();
    await git({ dir, homeDir, gitDir }, ['init', '--quiet', '--initial-branch=main'], options.pathEnv);
    // init records the host path of the work tree; inside the sandbox it is /workspace, and the
    // engine always names it (--work-tree), so the git directory does not.
    // Exit 5: the key is not set, which happens when two openings of one new run race (the reconciler
    // and a turn): the first init recorded it and already removed it.
    await git({ dir, homeDir, gitDir }, ['config', '--unset', 'core.worktree'], options.pathEnv, [0, 5]);
    // The samples are inert, but an empty hooks folder says plainly that none run.
    await rm(path.join(gitDir, 'hooks'), { recursive: true, force: true });
    // Readable by the sandbox's user whatever this process's umask (its commands read the history).
    if (owner) await git({ dir, homeDir, gitDir }, ['config', 'core.sharedRepository', '0644'], options.pathEnv);
    if (files) {
      // A folder kernel: its files under kernel/ (the paths were checked: relative, no ..).
      const folder = options.kernelFile.replace(/\/+$/, '');
      for (const [rel, text] of Object.entries(files)) {
        const problem = candidatePathProblem(rel);
        if (problem) throw new HarnessError(`cannot seed the workspace: ${problem}`, { code: 'workspace_seed' });
        const file = `${folder}/${rel}`;
        await mkdirBeneath(dir, path.posix.dirname(file), owner);
        await writeBeneath(dir, file, text, { owner });
      }
    } else await writeBeneath(dir, options.kernelFile, source ?? '', { owner });
    await writeBeneath(dir, '.gitignore', '# build outputs the agent creates while experimenting\n*.o\n*.so\na.out\n__pycache__/\n', { owner });
    await git({ dir, homeDir, gitDir }, ['add', '-A'], options.pathEnv);
    await git({ dir, homeDir, gitDir }, ['commit', '--quiet', '-m', message], options.pathEnv);
  }
  if (owner) await giveRunToSandbox([dir, homeDir], owner);
  const real = await realpath(dir);
  return { workspace: { runId: options.runId, dir: real, kernelFile: options.kernelFile, homeDir, gitDir }, created };
}

/**
 * When the service is root its sandboxes run as an unprivileged uid of the run's own (sandbox.ts):
 * the run's work tree and HOME become that uid's, private to it (a workspace from before, or files
 * the engine wrote, included; lchown, no symlink followed).
 */
async function giveRunToSandbox(dirs: string[], owner: Owner): Promise<void> {
  for (const dir of dirs) {
    const st = await lstat(dir);
    // Only the top is looked at each time: the engine gives what it creates to the owner itself.
    if (st.uid !== owner.uid || (st.mode & 0o077) !== 0) {
      await chownBeneath(dir, owner);
      await chmod(dir, 0o700);
    }
  }
}

/**
 * A workspace made before the git directory moved out keeps its history: `.git` moves to the
 * trusted place, minus everything in it the agent could have planted (hooks, config: a fresh config
 * replaces it).
 */
async function adoptLegacyGitDir(dir: string, gitDir: string): Promise<void> {
  const legacy = path.join(dir, '.git');
  const st = await lstat(legacy).catch(() => undefined);
  if (!st?.isDirectory() || !(await exists(path.join(legacy, 'HEAD'))) || (await exists(gitDir))) return;
  await mkdir(path.dirname(gitDir), { recursive: true });
  await rename(legacy, gitDir);
  await rm(path.join(gitDir, 'hooks'), { recursive: true, force: true });
  await rm(path.join(gitDir, 'info', 'attributes'), { force: true });
  await writeFile(path.join(gitDir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n');
}

/**
 * Refuses a workspace that is too big: every file in it counts, ignored by `.gitignore` or not (the
 * disk is spent either way), over `maxBytes`; a file git would commit over
 * WORKSPACE_MAX_FILE_BYTES; more than WORKSPACE_MAX_ENTRIES entries. Counted by walking the tree
 * beneath the workspace, never through a symlink. The message is for the model: which files, and
 * what to do.
 */
export async function checkWorkspaceSize(ws: Workspace, maxBytes: number, pathEnv: string): Promise<void> {
  const entries = await walkBeneath(ws.dir, '', { maxEntries: WORKSPACE_MAX_ENTRIES, shown: 'the workspace' }).catch((error: unknown) => {
    if (error instanceof Error && /holds more than/.test(error.message)) {
      throw new HarnessError(`The workspace is not committed: it holds more than ${WORKSPACE_MAX_ENTRIES} files and folders. Remove what you do not need (build trees, extracted archives), then call evaluate again.`, { code: 'workspace_too_large' });
    }
    throw error;
  });
  const sizes = entries.filter((e) => e.st.isFile()).map((e) => ({ name: e.path, bytes: e.st.size }));
  const total = sizes.reduce((sum, f) => sum + f.bytes, 0);
  let big = sizes.filter((f) => f.bytes > WORKSPACE_MAX_FILE_BYTES);
  if (big.length > 0) {
    // The per-file limit is git's: a large build output that .gitignore keeps out of the commit may stay.
    const listed = new Set((await git(ws, ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], pathEnv)).split('\0'));
    big = big.filter((f) => listed.has(f.name));
  }
  if (total <= maxBytes && big.length === 0) return;
  const mb = (b: number) => `${(b / 2 ** 20).toFixed(1)} MB`;
  const largest = sizes.sort((a, b) => b.bytes - a.bytes).slice(0, 3).map((f) => `${f.name} (${mb(f.bytes)})`).join(', ');
  throw new HarnessError(
    `The workspace is not committed: it holds ${mb(total)} (limit ${mb(maxBytes)}, every file counted, ignored or not; ${mb(WORKSPACE_MAX_FILE_BYTES)} per committed file). Largest: ${largest}. Delete these files (or move scratch data to /tmp), then call evaluate again.`,
    { code: 'workspace_too_large' },
  );
}

/**
 * The kernel file's source, read beneath the workspace without following a symlink: a regular
 * file of at most a job's source size, UTF-8 text without NUL (WorkspaceFileError otherwise).
 */
export async function readKernel(ws: Workspace, shown = ws.kernelFile): Promise<string> {
  return readTextBeneath(ws.dir, ws.kernelFile, { maxBytes: MAX_SOURCE_BYTES, shown });
}

/**
 * Commits everything in the workspace (an empty commit when nothing changed); returns the hash.
 * Refused (workspace_too_large) above `maxBytes`.
 */
export async function commitWorkspace(ws: Workspace, message: string, pathEnv: string, maxBytes: number): Promise<string> {
  await checkWorkspaceSize(ws, maxBytes, pathEnv);
  await git(ws, ['add', '-A'], pathEnv);
  await git(ws, ['commit', '--quiet', '--allow-empty', '-m', message], pathEnv);
  return git(ws, ['rev-parse', 'HEAD'], pathEnv);
}

/** Points a lightweight tag (e.g. `best`) at a commit. */
export async function tagCommit(ws: Workspace, tag: string, commit: string, pathEnv: string): Promise<void> {
  await git(ws, ['tag', '-f', tag, commit], pathEnv);
}

/** The workspace as a gzipped tar (without .git), refused above `maxBytes`. */
export async function snapshotWorkspace(ws: Workspace, maxBytes: number, pathEnv: string): Promise<Buffer> {
  const result = await execa('tar', ['--exclude=./.git', '-czf', '-', '.'], {
    cwd: ws.dir,
    env: { PATH: pathEnv },
    extendEnv: false,
    encoding: 'buffer',
    reject: false,
    maxBuffer: maxBytes + 1,
  });
  if (result.exitCode !== 0 || (result.stdout as Uint8Array).byteLength > maxBytes) {
    const size = (result.stdout as Uint8Array).byteLength;
    throw new HarnessError(
      size > maxBytes
        ? `the workspace is larger than ${Math.round(maxBytes / 1e6)} MB compressed; remove large files (build outputs, data) before using gpu_bash`
        : `could not archive the workspace: ${Buffer.from(result.stderr as Uint8Array).toString('utf8').trim()}`,
      { code: 'workspace_too_large' },
    );
  }
  return Buffer.from(result.stdout as Uint8Array);
}

/**
 * Removes a run's HOME (what its commands installed, cached and left there: gigabytes after one
 * run) when the run ends; the work tree and its history stay (continue, fork, export read them). A
 * run that goes on again gets a fresh, empty HOME.
 */
export async function removeRunHome(dataDir: string, runId: string): Promise<void> {
  await removeTree(workspacePaths(dataDir, runId).homeDir);
}

/** Writes the best candidate where a person can find it: `<dataDir>/results/<runId>/<kernel file>`. */
// A folder kernel (`kernel/`) is written as that folder with its files. Returns the path.
export async function exportBest(dataDir: string, runId: string, kernelFile: string, source: string | CandidateFiles): Promise<string> {
  const dir = path.join(dataDir, 'results', runId);
  await mkdir(dir, { recursive: true });
  const target = path.join(dir, kernelFile.replace(/\/+$/, ''));
  if (typeof source === 'string') {
    await writeFile(target, source);
    return target;
  }
  checkCandidateFiles(source, Object.keys(source).every((n) => n.endsWith('.py')) ? 'triton' : Object.keys(source).some((n) => n.endsWith('.cu')) ? 'cuda' : 'cpp');
  for (const [rel, text] of Object.entries(source)) {
    await mkdir(path.dirname(path.join(target, rel)), { recursive: true });
    await writeFile(path.join(target, rel), text);
  }
  return target;
}
