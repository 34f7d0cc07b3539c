import { randomBytes } from 'node:crypto';
import { cp, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { EvaluatePayloadSchema } from '../../src/queue/payloads.js';
import { resultKeyFromSecret } from '../../src/queue/result-key.js';
import { digestTaskFiles, packTask, readTaskFolder, unpackTask, type TaskBundle } from '../../src/queue/task-bundle.js';
import { createTempDir } from '../support/db.js';

const KEY = resultKeyFromSecret(randomBytes(32).toString('hex'), 'the server key');
const OTHER_KEY = resultKeyFromSecret(randomBytes(32).toString('hex'), 'another key');
const SOFTMAX = path.join(REPO_ROOT, 'kernels', 'cpu_softmax');

/** A bundle whose reference.py is the attacker's, with its digest recomputed (no key needed for that). */
function withReference(bundle: TaskBundle, code: string): TaskBundle {
  const files = bundle.files.map((f) => (f.path === 'reference.py' ? { ...f, content: Buffer.from(code).toString('base64') } : f));
  return { ...bundle, files, digest: digestTaskFiles(files.map((f) => ({ path: f.path, content: Buffer.from(f.content, 'base64') }))) };
}

// A task's reference.py runs in the harness as trusted code: the bundle a job carries must come from
// a server that holds the result key, and must be what that server packed.
describe('tasks that travel with the job', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  let root: string;
  beforeAll(async () => {
    tmp = await createTempDir('ks-task-bundle-');
    root = path.join(tmp.dir, 'job-tasks');
  });
  afterAll(() => tmp.remove());

  it("is written out on the worker as the server's folder, file for file, under its digest", async () => {
    const bundle = await packTask(SOFTMAX, 'cpu_softmax', KEY);
    expect(EvaluatePayloadSchema.shape.taskBundle.safeParse(bundle).success).toBe(true);
    expect(bundle.digest).toBe((await readTaskFolder(SOFTMAX)).digest);
    const tasksDir = await unpackTask(bundle, 'cpu_softmax', KEY, root);
    const dir = path.join(tasksDir, 'cpu_softmax');
    expect((await readdir(dir)).sort()).toEqual((await readdir(SOFTMAX)).sort());
    expect(await readFile(path.join(dir, 'reference.py'), 'utf8')).toBe(await readFile(path.join(SOFTMAX, 'reference.py'), 'utf8'));
    // Again: the folder is checked and used as it is.
    expect(await unpackTask(bundle, 'cpu_softmax', KEY, root)).toBe(tasksDir);
  });

  it('rewrites a written-out copy that was changed on disk before using it', async () => {
    const bundle = await packTask(SOFTMAX, 'cpu_softmax', KEY);
    const tasksDir = await unpackTask(bundle, 'cpu_softmax', KEY, root);
    await writeFile(path.join(tasksDir, 'cpu_softmax', 'reference.py'), 'raise SystemExit("tampered")\n');
    await unpackTask(bundle, 'cpu_softmax', KEY, root);
    expect(await readFile(path.join(tasksDir, 'cpu_softmax', 'reference.py'), 'utf8')).toBe(await readFile(path.join(SOFTMAX, 'reference.py'), 'utf8'));
  });

  it('refuses a bundle changed on the way: files that do not match its digest', async () => {
    const bundle = await packTask(SOFTMAX, 'cpu_softmax', KEY);
    const files = bundle.files.map((f) => (f.path === 'reference.py' ? { ...f, content: Buffer.from('import os; os.system("id")\n').toString('base64') } : f));
    await expect(unpackTask({ ...bundle, files }, 'cpu_softmax', KEY, root)).rejects.toThrow(/do not match the digest they were sent with .* Not evaluated\./);
  });

  it('refuses a bundle made without the key (digest recomputed, seal forged or copied), and one renamed to another task', async () => {
    const bundle = await packTask(SOFTMAX, 'cpu_softmax', KEY);
    const forged = withReference(bundle, 'import os; os.system("touch /tmp/owned")\n');
    await expect(unpackTask(forged, 'cpu_softmax', KEY, root)).rejects.toThrow(/carries a seal that does not match it: it was not packed by a KernelSeek server holding this result key/);
    await expect(unpackTask({ ...forged, seal: randomBytes(32).toString('hex') }, 'cpu_softmax', KEY, root)).rejects.toThrow(/seal that does not match/);
    // The genuine bundle of one task offered as another: the seal binds the name.
    await expect(unpackTask(bundle, 'rmsnorm', KEY, root)).rejects.toThrow(/Task rmsnorm in this job carries a seal that does not match/);
    expect(await readdir(root).then((d) => d.filter((n) => n.startsWith('.')))).toEqual([]);
  });

  it('names both keys when the server and the worker hold different result keys', async () => {
    const bundle = await packTask(SOFTMAX, 'cpu_softmax', OTHER_KEY);
    await expect(unpackTask(bundle, 'cpu_softmax', KEY, root)).rejects.toThrow(
      `Task cpu_softmax in this job was packed by a server holding result key ${OTHER_KEY.id}, and this worker holds key ${KEY.id} (the server key): give serve, kernelseek eval --remote and every gpu-worker the same KERNELSEEK_RESULT_KEY. Not evaluated.`,
    );
  });

  it('refuses paths that leave the task folder, in the payload schema, before anything is written', async () => {
    const bundle = await packTask(SOFTMAX, 'cpu_softmax', KEY);
    for (const bad of ['../outside.py', '/etc/cron.d/x', 'a/../../b', '.', 'sub/./x', 'with space.py', '']) {
      const files = [...bundle.files, { path: bad, content: '' }];
      const parsed = EvaluatePayloadSchema.shape.taskBundle.safeParse({ ...bundle, files });
      expect(parsed.success, bad).toBe(false);
    }
  });

  it('packs no symbolic link (it would carry what it points at) and says when a task folder is too large to travel', async () => {
    const dir = path.join(tmp.dir, 'linked_task');
    await cp(SOFTMAX, dir, { recursive: true });
    await symlink('/etc/passwd', path.join(dir, 'passwd'));
    await expect(packTask(dir, 'linked_task', KEY)).rejects.toThrow(/passwd is a symbolic link: a task folder travels to the workers with its files/);
    const big = path.join(tmp.dir, 'big_task');
    await cp(SOFTMAX, big, { recursive: true });
    await mkdir(path.join(big, 'measurements'));
    await writeFile(path.join(big, 'measurements', 'trace.bin'), Buffer.alloc(5 << 20));
    await expect(packTask(big, 'big_task', KEY)).rejects.toThrow(/at most 256 files and 4 MiB\. Move measurements and other large files out of it\./);
  });
});
