import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { HarnessError } from '../core/errors.js';
import { isolatedGitEnv, runGit, type GitRunner } from './git.js';
import { checkRelativePath, type KernelFile } from './kernel-files.js';

export interface KernelDiff {
  /** A unified diff in git's format (`git apply` and `patch -p1` take it); empty when nothing changed. */
  patch: string;
  filesChanged: number;
  insertions: number;
  deletions: number;
}

/**
 * The unified diff that turns `baseline` into `candidate` (any number of files: added, changed,
 * removed), with paths under `prefix` (the kernel's folder in the team's repository; none: the
 * kernel's own file names). Written by git itself on a throw-away index, so it applies with
 * `git apply` exactly as git would write it.
 */
export async function diffKernelFiles(
  baseline: KernelFile[],
  candidate: KernelFile[],
  options: { prefix?: string; pathEnv?: string | undefined; git?: GitRunner } = {},
): Promise<KernelDiff> {
  const git = options.git ?? runGit;
  const prefix = options.prefix ? `${checkRelativePath(options.prefix, 'the diff prefix')}/` : '';
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'kernelseek-diff-'));
  const work = path.join(tmp, 'work');
  const env = { ...isolatedGitEnv(options.pathEnv, tmp), GIT_DIR: path.join(tmp, 'git'), GIT_WORK_TREE: work };
  const run = async (args: string[], ok = [0]) => {
    const r = await git({ args: ['-c', 'core.hooksPath=/dev/null', '-c', 'core.autocrlf=false', '-c', 'core.fileMode=false', ...args], cwd: work, env });
    if (!ok.includes(r.exitCode)) throw new HarnessError(`git ${args[0]} failed while writing the diff: ${r.stderr.trim()}`, { code: 'diff_failed' });
    return r.stdout;
  };
  /** Stages exactly `files` and returns the tree git makes of them. */
  const treeOf = async (files: KernelFile[]): Promise<string> => {
    await rm(work, { recursive: true, force: true });
    await mkdir(work, { recursive: true });
    for (const f of files) {
      const file = path.join(work, prefix, checkRelativePath(f.path, 'a kernel file'));
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, f.content);
    }
    await run(['add', '-A', '--', '.']);
    return (await run(['write-tree'])).trim();
  };
  try {
    await mkdir(work, { recursive: true });
    await run(['init', '--quiet']);
    const before = await treeOf(baseline);
    const after = await treeOf(candidate);
    const flags = ['--no-renames', '--no-color', '--no-ext-diff', '--src-prefix=a/', '--dst-prefix=b/'];
    const patch = await run(['diff', ...flags, '--full-index', '--binary', before, after]);
    const numstat = await run(['diff', ...flags, '--numstat', before, after]);
    let insertions = 0;
    let deletions = 0;
    const lines = numstat.split('\n').filter(Boolean);
    for (const line of lines) {
      const [add, del] = line.split('\t');
      insertions += Number(add) || 0;
      deletions += Number(del) || 0;
    }
    return { patch, filesChanged: lines.length, insertions, deletions };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
