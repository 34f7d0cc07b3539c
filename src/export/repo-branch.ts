import { lstat, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UserInputError } from '../core/errors.js';
import { displayRepo, GitError, runGit, type GitRunner } from './git.js';
import { checkRelativePath } from './kernel-files.js';

/**
 * A new branch on the team's repository with some files written into it, pushed: a shallow clone
 * in a temporary folder, one commit, one push that never forces (an existing branch is refused
 * before, and a race is refused by the push itself). Git runs with the person's own configuration
 * and credentials (config's git environment) but no hooks.
 */
export interface BranchRequest {
  repo: string;
  /** null: the repository's default branch. */
  base: string | null;
  branch: string;
  /** Decides, once the repository is cloned, where each file goes (relative paths). */
  place: (probe: { isFolder(rel: string): Promise<boolean> }) => Promise<{ path: string; content: string | Buffer }[]>;
  message: string;
  /** git's environment (the person's HOME, credential helper, SSH agent, ...). */
  env: Record<string, string>;
  /** Extra environment for the push only (credentials by environment, never argv). */
  pushEnv?: Record<string, string>;
  git?: GitRunner;
  /** Strings never to show in an error (secrets). */
  secrets?: string[];
}

export interface PushedBranch {
  base: string;
  branch: string;
  commit: string;
  paths: string[];
}

const NO_HOOKS = ['-c', 'core.hooksPath=/dev/null', '-c', 'protocol.ext.allow=never'];
const FALLBACK_IDENTITY = { GIT_AUTHOR_NAME: 'KernelSeek', GIT_AUTHOR_EMAIL: 'kernelseek@users.noreply.invalid', GIT_COMMITTER_NAME: 'KernelSeek', GIT_COMMITTER_EMAIL: 'kernelseek@users.noreply.invalid' };

/** Writes `content` at `rel` under `root`, refusing to pass through or replace a symbolic link (a repository can hold one that points anywhere). */
async function writeInside(root: string, rel: string, content: string | Buffer): Promise<void> {
  const parts = checkRelativePath(rel, 'the path in the repository').split('/');
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    dir = path.join(dir, part);
    const st = await lstat(dir).catch(() => undefined);
    if (st?.isSymbolicLink()) throw new UserInputError(`${rel}: ${path.relative(root, dir)} is a symbolic link in the repository; KernelSeek does not write through links. Choose a --path that is a real folder.`, { code: 'repo_path_link' });
    if (st && !st.isDirectory()) throw new UserInputError(`${rel}: ${path.relative(root, dir)} is a file in the repository, not a folder.`, { code: 'repo_path_file' });
    if (!st) await mkdir(dir);
  }
  const file = path.join(root, ...parts);
  const st = await lstat(file).catch(() => undefined);
  if (st?.isSymbolicLink()) throw new UserInputError(`${rel} is a symbolic link in the repository; KernelSeek does not write through links.`, { code: 'repo_path_link' });
  if (st?.isDirectory()) throw new UserInputError(`${rel} is a folder in the repository: end --path with / to write the kernel into it.`, { code: 'repo_path_folder' });
  await writeFile(file, content);
}

export async function pushKernelBranch(request: BranchRequest): Promise<PushedBranch> {
  const git = request.git ?? runGit;
  if (request.repo.startsWith('-') || /\s/.test(request.repo) || request.repo.length === 0) {
    throw new UserInputError(`--repo ${JSON.stringify(displayRepo(request.repo))} is not a git URL or path (it may not start with - or hold spaces).`, { code: 'bad_repo' });
  }
  const shown = displayRepo(request.repo);
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'kernelseek-pr-'));
  const clone = path.join(tmp, 'repo');
  const env = { ...request.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
  const hide = [tmp, clone, ...(request.secrets ?? [])];
  const run = async (args: string[], what: string, options: { ok?: number[]; cwd?: string; input?: string; env?: Record<string, string>; code?: string } = {}) => {
    const r = await git({ args: [...NO_HOOKS, ...args], cwd: options.cwd ?? clone, env: { ...env, ...options.env }, ...(options.input !== undefined ? { input: options.input } : {}) });
    if (!(options.ok ?? [0]).includes(r.exitCode)) throw new GitError(what, r.stderr, { hide, ...(options.code ? { code: options.code } : {}) });
    return r;
  };
  try {
    const checked = await git({ args: ['check-ref-format', '--branch', request.branch], cwd: tmp, env });
    if (checked.exitCode !== 0 || request.branch.startsWith('-')) throw new UserInputError(`'${request.branch}' is not a valid branch name; pass another with --branch.`, { code: 'bad_branch' });
    if (request.base !== null && (request.base.startsWith('-') || (await git({ args: ['check-ref-format', '--branch', request.base], cwd: tmp, env })).exitCode !== 0)) {
      throw new UserInputError(`'${request.base}' is not a valid branch name for --base.`, { code: 'bad_branch' });
    }
    await run(['clone', '--quiet', '--no-tags', '--single-branch', '--depth', '1', ...(request.base ? ['--branch', request.base] : []), '--', request.repo, clone], `could not clone ${shown}${request.base ? ` at ${request.base}` : ''}`, { cwd: tmp, env: request.pushEnv ?? {}, code: 'repo_unreachable' });
    const base = request.base ?? (await run(['symbolic-ref', '--short', 'HEAD'], 'could not read the default branch')).stdout.trim();
    // Exit 2: no such branch. Checked before any work; the push below never forces, so a race loses nothing either.
    const existing = await run(['ls-remote', '--exit-code', '--heads', 'origin', `refs/heads/${request.branch}`], `could not list the branches of ${shown}`, { ok: [0, 2], env: request.pushEnv ?? {} });
    if (existing.exitCode === 0) {
      throw new UserInputError(`Branch ${request.branch} already exists on ${shown}; nothing was pushed. Delete it there, or pass another name with --branch.`, { code: 'branch_exists' });
    }
    await run(['switch', '--quiet', '-c', request.branch], `could not create branch ${request.branch}`);
    const probe = {
      isFolder: async (rel: string) => (await lstat(path.join(clone, checkRelativePath(rel, 'the path in the repository'))).catch(() => undefined))?.isDirectory() === true,
    };
    const files = await request.place(probe);
    for (const f of files) await writeInside(clone, f.path, f.content);
    await run(['add', '--', ...files.map((f) => f.path)], 'could not stage the kernel');
    const identity = (await git({ args: ['config', 'user.email'], cwd: clone, env })).exitCode === 0 ? {} : FALLBACK_IDENTITY;
    await run(['commit', '--quiet', '--no-verify', '--cleanup=verbatim', '-F', '-'], 'could not commit the kernel', { input: request.message, env: identity });
    const commit = (await run(['rev-parse', 'HEAD'], 'could not read the commit')).stdout.trim();
    await run(['push', '--quiet', '--no-verify', 'origin', `refs/heads/${request.branch}:refs/heads/${request.branch}`], `could not push ${request.branch} to ${shown}`, { env: request.pushEnv ?? {}, code: 'push_refused' });
    return { base, branch: request.branch, commit, paths: files.map((f) => f.path) };
  } finally {
    await rm(tmp, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  }
}
