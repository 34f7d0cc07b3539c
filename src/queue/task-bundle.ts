import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { lstat, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { NonRetryableError, UserInputError } from '../core/errors.js';
import { listCountedFiles } from './harness-version.js';
import type { ResultKey } from './result-key.js';

/**
 * Tasks travel with the job: the server packs the task folder of its trusted checkout into the
 * evaluation's payload, and the worker writes it out and evaluates against that copy, so no task
 * is ever copied to a GPU host by hand and a worker can never run a run's candidate against another
 * version of its task.
 *
 * A task's reference.py runs in the harness as trusted code, outside every sandbox. So a bundle is
 * taken only when it is sealed with the result key (HMAC-SHA256 over the task's name and digest):
 * whoever can write to Redis but does not hold the key cannot make a worker run code of their
 * choice as a task. The worker recomputes the digest from the files it received, and takes the
 * bundle only when both the digest and its seal are right.
 */

export const MAX_TASK_BUNDLE_BYTES = 4 << 20;
export const MAX_TASK_BUNDLE_FILES = 256;
const SEGMENT = /^(?!\.{1,2}$)[A-Za-z0-9_.+-]{1,128}$/;

export const TaskFileSchema = z.strictObject({
  path: z
    .string()
    .max(512)
    .refine((p) => p.split('/').every((s) => SEGMENT.test(s)), { message: 'a task file path must be relative, with plain names (letters, digits, _ . + -) between slashes and no . or .. part' }),
  /** The file's bytes, base64. */
  content: z.string(),
});

export const TaskBundleSchema = z.strictObject({
  /** sha256 of the files (each file's path and the sha256 of its content), hex. */
  digest: z.string().regex(/^[0-9a-f]{64}$/, { message: 'digest must be 64 hex digits' }),
  files: z
    .array(TaskFileSchema)
    .min(1)
    .max(MAX_TASK_BUNDLE_FILES)
    .refine((files) => new Set(files.map((f) => f.path)).size === files.length, { message: 'a task file appears twice' })
    .refine((files) => files.reduce((n, f) => n + Math.floor((f.content.length * 3) / 4), 0) <= MAX_TASK_BUNDLE_BYTES + 4 * files.length, {
      message: `the task's files are larger than ${MAX_TASK_BUNDLE_BYTES >> 20} MiB`,
    }),
  /** The fingerprint of the key it is sealed with (ResultKey.id), to name a mismatch. */
  key: z.string().max(64),
  /** HMAC-SHA256 under the result key of `kernelseek.task/1`, the task's name and the digest. */
  seal: z.string().regex(/^[0-9a-f]{64}$/, { message: 'seal must be 64 hex digits' }),
});
export type TaskBundle = z.infer<typeof TaskBundleSchema>;

/** The digest of a task's files: the same whether read from a folder or from a bundle. */
export function digestTaskFiles(files: { path: string; content: Buffer }[]): string {
  const hash = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    hash.update(`${f.path}\0${createHash('sha256').update(f.content).digest('hex')}\n`);
  }
  return hash.digest('hex');
}

function sealOf(key: ResultKey, task: string, digest: string): string {
  return createHmac('sha256', key.secret).update(`kernelseek.task/1\n${task}\n${digest}`).digest('hex');
}

/** The files of a task folder (what the harness may read: every file but bytecode), with their digest. */
export async function readTaskFolder(dir: string): Promise<{ files: { path: string; content: Buffer }[]; digest: string }> {
  const names = await listCountedFiles(dir);
  const files: { path: string; content: Buffer }[] = [];
  let bytes = 0;
  for (const name of names) {
    const full = path.join(dir, name);
    if (!name.split('/').every((s) => SEGMENT.test(s))) {
      throw new UserInputError(`${full}: a task's file names travel to the workers and must be plain (letters, digits, _ . + -): rename it or move it out of the task folder.`, { code: 'task_bundle' });
    }
    // A symbolic link in a task folder would carry whatever it points at: refused, not followed.
    if ((await lstat(full)).isSymbolicLink()) throw new UserInputError(`${full} is a symbolic link: a task folder travels to the workers with its files, so put the file itself there.`, { code: 'task_bundle' });
    const content = await readFile(full);
    bytes += content.length;
    files.push({ path: name, content });
  }
  if (files.length > MAX_TASK_BUNDLE_FILES || bytes > MAX_TASK_BUNDLE_BYTES) {
    throw new UserInputError(
      `The task folder ${dir} holds ${files.length} files, ${(bytes / 2 ** 20).toFixed(1)} MiB; a task travels to the workers with each job, at most ${MAX_TASK_BUNDLE_FILES} files and ${MAX_TASK_BUNDLE_BYTES >> 20} MiB. Move measurements and other large files out of it.`,
      { code: 'task_bundle' },
    );
  }
  return { files, digest: digestTaskFiles(files) };
}

/** The server's side: the task folder packed and sealed for one job. */
export async function packTask(dir: string, task: string, key: ResultKey): Promise<TaskBundle> {
  const { files, digest } = await readTaskFolder(dir);
  return { digest, files: files.map((f) => ({ path: f.path, content: f.content.toString('base64') })), key: key.id, seal: sealOf(key, task, digest) };
}

/**
 * The worker's side: checks the bundle (its digest against its files, its seal against this
 * worker's key) and writes it out under `<root>/<digest>/<task>/`, once per digest: a folder
 * already there is checked again before it is used, and rewritten when it does not match. Returns
 * the tasks folder to evaluate against. Throws NonRetryableError for a bundle that can never be
 * taken here.
 */
export async function unpackTask(bundle: TaskBundle, task: string, key: ResultKey, root: string): Promise<string> {
  const files = bundle.files.map((f) => ({ path: f.path, content: Buffer.from(f.content, 'base64') }));
  const digest = digestTaskFiles(files);
  if (digest !== bundle.digest) {
    throw new NonRetryableError('task_digest', `The files of task ${task} in this job do not match the digest they were sent with (${bundle.digest.slice(0, 12)}, the files give ${digest.slice(0, 12)}): the job was changed on the way. Not evaluated.`);
  }
  const good = Buffer.from(sealOf(key, task, digest), 'hex');
  if (!timingSafeEqual(good, Buffer.from(bundle.seal, 'hex'))) {
    throw new NonRetryableError(
      'task_seal',
      bundle.key !== key.id
        ? `Task ${task} in this job was packed by a server holding result key ${bundle.key}, and this worker holds key ${key.id} (${key.source}): give serve, kernelseek eval --remote and every gpu-worker the same KERNELSEEK_RESULT_KEY. Not evaluated.`
        : `Task ${task} in this job carries a seal that does not match it: it was not packed by a KernelSeek server holding this result key, or it was changed on the way. Not evaluated.`,
    );
  }
  const tasksDir = path.join(root, digest.slice(0, 32));
  const dir = path.join(tasksDir, task);
  const existing = await readTaskFolder(dir).catch(() => undefined);
  if (existing?.digest === digest) return tasksDir;
  // Written whole beside its place, then renamed into it: a worker killed half-way leaves no
  // half-written task, and two slots writing the same digest at once both end with a whole one.
  const temp = path.join(root, `.${digest.slice(0, 12)}-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    for (const f of files) {
      const target = path.join(temp, f.path);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, f.content, { mode: 0o644 });
    }
    await mkdir(tasksDir, { recursive: true });
    await rm(dir, { recursive: true, force: true });
    await rename(temp, dir).catch(async (error: NodeJS.ErrnoException) => {
      // Another slot renamed its identical copy into place first.
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    });
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  return tasksDir;
}
