import { cp, mkdir, rename, rm, writeFile, appendFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { computeHarnessVersion, listCountedFiles } from '../../src/queue/harness-version.js';
import { createTempDir } from '../support/db.js';

// The harness version a worker announces and a server sends jobs for: every file of harness/
// counts, whatever its name, so a change anywhere in it (or moving its modules into packages)
// gives another version, and what git ignores there does not.
describe('harness version', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  let n = 0;
  /** A copy of the checkout's package.json and harness/ to change. */
  const copy = async () => {
    const root = path.join(tmp.dir, `root-${n++}`);
    await mkdir(root);
    await cp(path.join(REPO_ROOT, 'package.json'), path.join(root, 'package.json'));
    await cp(path.join(REPO_ROOT, 'harness'), path.join(root, 'harness'), { recursive: true });
    return root;
  };
  beforeAll(async () => {
    tmp = await createTempDir('ks-harness-version-');
  });
  afterAll(() => tmp.remove());

  it('covers exactly the files git tracks under harness/', async () => {
    const tracked = await execa('git', ['ls-files', 'harness'], { cwd: REPO_ROOT, reject: false });
    if (tracked.exitCode !== 0) return expect.fail(`git ls-files failed here: ${tracked.stderr}`);
    const files = (await listCountedFiles(path.join(REPO_ROOT, 'harness'))).map((f) => `harness/${f}`);
    // Untracked work in progress in a developer's checkout would show here: compare tracked files only.
    const untracked = (await execa('git', ['ls-files', '--others', '--exclude-standard', 'harness'], { cwd: REPO_ROOT })).stdout.split('\n').filter(Boolean);
    expect(files.filter((f) => !untracked.includes(f))).toEqual(tracked.stdout.split('\n').filter(Boolean).sort());
  });

  it('is the same for an identical copy and differs after any change to a file, a new file or a move', async () => {
    const original = await computeHarnessVersion(REPO_ROOT);
    expect(original.version).toMatch(/^\d+\.\d+\.\d+\+[0-9a-f]{12}$/);
    expect(original.version.endsWith(`+${original.id}`)).toBe(true);

    const same = await copy();
    // Bytecode and pytest's cache are what running the harness leaves: ignored, as git ignores them.
    await mkdir(path.join(same, 'harness', '__pycache__'), { recursive: true });
    await writeFile(path.join(same, 'harness', '__pycache__', 'api.cpython-311.pyc'), 'bytecode');
    await writeFile(path.join(same, 'harness', 'stray.pyc'), 'bytecode');
    await mkdir(path.join(same, 'harness', '.pytest_cache'));
    expect((await computeHarnessVersion(same)).version).toBe(original.version);

    // Which files are changed is picked from the harness as it is: the test holds when its modules move.
    const files = await listCountedFiles(path.join(REPO_ROOT, 'harness'));
    const py = files.filter((f) => f.endsWith('.py') && !f.endsWith('__init__.py'));
    const edited = await copy();
    await appendFile(path.join(edited, 'harness', files[0]!), ' ');
    const added = await copy();
    await mkdir(path.join(added, 'harness', 'a_new_package'));
    await writeFile(path.join(added, 'harness', 'a_new_package', '__init__.py'), '');
    const moved = await copy();
    const module = py[py.length - 1]!;
    await mkdir(path.join(moved, 'harness', 'moved_here'));
    await rename(path.join(moved, 'harness', module), path.join(moved, 'harness', 'moved_here', path.basename(module)));
    const bumped = await copy();
    await writeFile(path.join(bumped, 'package.json'), JSON.stringify({ version: '9.9.9' }));
    const removed = await copy();
    await rm(path.join(removed, 'harness', py[0]!));

    const versions = await Promise.all([edited, added, moved, bumped, removed].map(async (r) => (await computeHarnessVersion(r)).version));
    expect(new Set([original.version, ...versions]).size).toBe(6);
    expect(versions[3]).toMatch(/^9\.9\.9\+/);
  });
});
