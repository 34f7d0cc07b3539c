import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { UserInputError } from '../core/errors.js';
import type { Evaluation } from '../db/index.js';
import { decodeCandidate, isPythonBaseline, readCandidateFolder, type CandidateFiles } from '../harness/candidate.js';
import { pythonCallableFile, type LoadedTask } from '../harness/tasks.js';

/**
 * A kernel is a set of files, each named by its path relative to the kernel's folder: one file
 * (task.yaml `kernel.file: kernel.cu`) or a folder's (`kernel.file: kernel/`, each file as
 * `kernel/<path>`). The diff, the evidence, the export folder and the pull request handle any number.
 */
export interface KernelFile {
  /** Relative, `/`-separated, normalised (checked by checkRelativePath). */
  path: string;
  content: string;
}

/**
 * A relative path that stays inside the folder it is joined to: no absolute path, no `.` or `..`
 * part, no `.git` part (any case: case-insensitive file systems), no backslash, NUL or control
 * character. Returns it normalised (no trailing `/`). `what` names the input in the error.
 */
export function checkRelativePath(p: string, what: string): string {
  const fix = `${what} must be a relative path inside the repository, e.g. kernels/softmax.cpp`;
  // eslint-disable-next-line no-control-regex
  if (p.length === 0 || p.length > 1000 || /[\\\u0000-\u001f]/.test(p)) throw new UserInputError(`${fix} (got ${JSON.stringify(p)})`, { code: 'bad_path' });
  if (p.startsWith('/')) throw new UserInputError(`${fix}, not an absolute path (got ${p})`, { code: 'bad_path' });
  const parts = p.replace(/\/+$/, '').split('/');
  for (const part of parts) {
    if (part === '' || part === '.' || part === '..') throw new UserInputError(`${fix}, without empty, . or .. parts (got ${p})`, { code: 'bad_path' });
    if (part.toLowerCase() === '.git') throw new UserInputError(`${fix}, outside .git (got ${p})`, { code: 'bad_path' });
  }
  return parts.join('/');
}

/**
 * The candidate's files as the store holds them: the evaluated source (the row travels with the
 * database, so any host can export any run), named as the task names its kernel file.
 */
export function candidateFilesOf(evaluation: Pick<Evaluation, 'source'>, task: LoadedTask): KernelFile[] {
  if (task.layout.folder) return folderFiles(task, decodeCandidate(evaluation.source, task.layout));
  return [{ path: checkRelativePath(task.task.kernel.file, 'kernel.file'), content: evaluation.source }];
}

function folderFiles(task: LoadedTask, files: CandidateFiles): KernelFile[] {
  return Object.keys(files)
    .sort()
    .map((rel) => ({ path: checkRelativePath(`${task.layout.name}/${rel}`, 'kernel file'), content: files[rel]! }));
}

/** The task's baseline, from the trusted task folder, under the kernel's own file name. */
export async function baselineFilesOf(task: LoadedTask): Promise<KernelFile[]> {
  // A baseline that is a Python callable has no source: the candidate's diff is against nothing.
  if (isPythonBaseline(task.task.kernel.baseline)) return [];
  if (task.layout.folder) return folderFiles(task, await readCandidateFolder(path.join(task.dir, task.task.kernel.baseline)));
  const content = await readFile(path.join(task.dir, task.task.kernel.baseline), 'utf8');
  return [{ path: checkRelativePath(task.task.kernel.file, 'kernel.file'), content }];
}

export function sha256(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/**
 * The task's digest: sha256 over the files that define what "correct" and "fast" mean (task.yaml,
 * reference.py, the baseline), each as its name, its length and its bytes, in name order. Computed
 * from the trusted task folder when the evidence is written.
 */
export async function digestTask(task: LoadedTask): Promise<{ digest: string; files: string[] }> {
  const baseline = task.task.kernel.baseline;
  let baselineFiles = [baseline];
  if (isPythonBaseline(baseline)) baselineFiles = [pythonCallableFile(baseline).file].filter((f): f is string => f !== undefined);
  else if (task.layout.folder) baselineFiles = Object.keys(await readCandidateFolder(path.join(task.dir, baseline))).map((rel) => `${baseline.replace(/\/+$/, '')}/${rel}`);
  const files = [...new Set(['task.yaml', 'reference.py', ...baselineFiles])].sort();
  const hash = createHash('sha256');
  for (const name of files) {
    const bytes = await readFile(path.join(task.dir, name));
    hash.update(`${name}\0${bytes.length}\0`).update(bytes);
  }
  return { digest: `sha256:${hash.digest('hex')}`, files };
}
