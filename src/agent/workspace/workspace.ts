import { mkdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { HarnessError } from '../../core/errors.js';

/**
 * A run's workspace: a git repository under `<dataDir>/workspaces/<runId>` holding the kernel file
 * (seeded with the task's baseline) and whatever notes the agent writes. Every evaluated candidate is
 * committed, so any version can be diffed, restored or exported.
 */
export interface Workspace {
  runId: string;
  /** Real path of the repository root (symlinks resolved): every tool is confined to it. */
  dir: string;
  /** The kernel file's name inside `dir` (task.yaml `kernel.file`). */
  kernelFile: string;
  /** HOME for the agent's commands, outside the repository. */
  homeDir: string;
}

const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'KernelSeek',
  GIT_AUTHOR_EMAIL: 'agent@kernelseek.invalid',
  GIT_COMMITTER_NAME: 'KernelSeek',
  GIT_COMMITTER_EMAIL: 'agent@kernelseek.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
};

export function workspacePaths(dataDir: string, runId: string) {
  return { dir: path.join(dataDir, 'workspaces', runId), homeDir: path.join(dataDir, 'homes', runId) };
}

async function git(ws: { dir: string; homeDir: string }, args: string[], pathEnv: string): Promise<string> {
  const result = await execa('git', args, {
    cwd: ws.dir,
    env: { PATH: pathEnv, HOME: ws.homeDir, ...GIT_IDENTITY },
    extendEnv: false,
    reject: false,
  });
  if (result.exitCode !== 0) {
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
 * Opens the run's workspace, creating it when absent: `seed` gives the kernel source to start from
 * (the baseline for a new run; the last evaluated candidate when a worker on another host resumes a
 * run whose workspace it does not have). Returns whether it had to be created.
 */
export async function ensureWorkspace(options: WorkspaceOptions, seed: () => Promise<{ source: string; message: string }>): Promise<{ workspace: Workspace; created: boolean }> {
  const { dir, homeDir } = workspacePaths(options.dataDir, options.runId);
  await mkdir(homeDir, { recursive: true });
  const created = !(await exists(path.join(dir, '.git')));
  if (created) {
    await mkdir(dir, { recursive: true });
    const { source, message } = await seed();
    await git({ dir, homeDir }, ['init', '--quiet', '--initial-branch=main'], options.pathEnv);
    await writeFile(path.join(dir, options.kernelFile), source);
    await writeFile(path.join(dir, '.gitignore'), '# build outputs the agent creates while experimenting\n*.o\n*.so\na.out\n__pycache__/\n');
    await git({ dir, homeDir }, ['add', '-A'], options.pathEnv);
    await git({ dir, homeDir }, ['commit', '--quiet', '-m', message], options.pathEnv);
  }
  const real = await realpath(dir);
  return { workspace: { runId: options.runId, dir: real, kernelFile: options.kernelFile, homeDir }, created };
}

export async function readKernel(ws: Workspace): Promise<string> {
  return readFile(path.join(ws.dir, ws.kernelFile), 'utf8');
}

/** Commits everything in the workspace (an empty commit when nothing changed); returns the hash. */
export async function commitWorkspace(ws: Workspace, message: string, pathEnv: string): Promise<string> {
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

/** Writes the best candidate where a person can find it: `<dataDir>/results/<runId>/<kernel file>`. */
export async function exportBest(dataDir: string, runId: string, kernelFile: string, source: string): Promise<string> {
  const dir = path.join(dataDir, 'results', runId);
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, kernelFile);
  await writeFile(file, source);
  return file;
}
