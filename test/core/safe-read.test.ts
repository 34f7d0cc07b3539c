import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import { link, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chownBeneath,
  decodeSource,
  namesOf,
  readBeneath,
  readFolderBeneath,
  removeTree,
  walkBeneath,
  WorkspaceFileError,
  writeBeneath,
} from '../../src/core/safe-read.js';
import { createTempDir } from '../support/db.js';

// The one module through which the host touches what a sandbox wrote (src/core/safe-read.ts).
let tmp: { dir: string; remove(): Promise<void> };
let root: string;
let outside: string;

beforeAll(async () => {
  tmp = await createTempDir('ks-safe-read-');
  root = path.join(tmp.dir, 'ws');
  outside = path.join(tmp.dir, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'OUTSIDE-SECRET\n');
});
afterAll(() => tmp.remove());

describe('paths', () => {
  it('takes only names beneath the folder: no absolute path, no .., no NUL', () => {
    expect(namesOf('kernel/./a.cu')).toEqual(['kernel', 'a.cu']);
    for (const bad of ['/etc/shadow', '../outside/secret.txt', 'a/../../b', 'a\0b']) expect(() => namesOf(bad)).toThrow(WorkspaceFileError);
  });

  it('refuses a symlinked folder anywhere on the way, even one that points inside', async () => {
    await mkdir(path.join(root, 'real'), { recursive: true });
    await writeFile(path.join(root, 'real', 'k.cu'), 'ok\n');
    await symlink(outside, path.join(root, 'out'));
    await symlink('real', path.join(root, 'in'));
    await expect(readBeneath(root, 'out/secret.txt', { maxBytes: 1000 })).rejects.toThrow(/goes through a symlink \(out\)/);
    await expect(readBeneath(root, 'in/k.cu', { maxBytes: 1000 })).rejects.toThrow(/goes through a symlink \(in\)/);
    expect((await readBeneath(root, 'real/k.cu', { maxBytes: 1000 })).toString()).toBe('ok\n');
  });
});

describe('source text', () => {
  it('accepts UTF-8 and refuses NUL, overlong forms, surrogates and a cut sequence, saying where', () => {
    expect(decodeSource(Buffer.from('é ∑ 😀\n', 'utf8'), 'k')).toBe('é ∑ 😀\n');
    expect(() => decodeSource(Buffer.from('a\nb\0', 'latin1'), 'k')).toThrow(/NUL byte \(line 2, byte 3\)/);
    for (const bytes of [[0x61, 0xc0, 0x80], [0x61, 0xed, 0xa0, 0x80], [0x61, 0xe2, 0x88], [0x61, 0xf5, 0x80, 0x80, 0x80]]) {
      expect(() => decodeSource(Buffer.from(bytes), 'k')).toThrow(/not valid UTF-8 \(line 1, byte 1\)/);
    }
  });
});

describe('a kernel that is a folder of files', () => {
  it('reads every file beneath it in order, and refuses a link, a FIFO or too much among them', async () => {
    const k = path.join(root, 'kernel');
    await mkdir(path.join(k, 'inc'), { recursive: true });
    await writeFile(path.join(k, 'main.cu'), 'main\n');
    await writeFile(path.join(k, 'inc', 'tile.h'), 'tile\n');
    expect(await readFolderBeneath(root, 'kernel', { maxBytes: 1000, maxFiles: 10 })).toEqual([
      { path: 'inc/tile.h', text: 'tile\n' },
      { path: 'main.cu', text: 'main\n' },
    ]);
    await expect(readFolderBeneath(root, 'kernel', { maxBytes: 6, maxFiles: 10 })).rejects.toThrow(/kernel\/main\.cu is 5 bytes; at most 1 are read/);
    await symlink(path.join(outside, 'secret.txt'), path.join(k, 'inc', 'secret.h'));
    await expect(readFolderBeneath(root, 'kernel', { maxBytes: 1000, maxFiles: 10 })).rejects.toThrow(/kernel\/inc\/secret\.h is a symlink/);
    await removeTree(path.join(k, 'inc'));
    execFileSync('mkfifo', [path.join(k, 'pipe.cu')]);
    await expect(readFolderBeneath(root, 'kernel', { maxBytes: 1000, maxFiles: 10 })).rejects.toThrow(/kernel\/pipe\.cu is a FIFO/);
  });
});

describe('walking, owning and removing a tree the sandbox wrote', () => {
  it('the walk never enters a symlinked folder and stops past its entry cap', async () => {
    const t = path.join(tmp.dir, 'walk');
    await mkdir(path.join(t, 'a'), { recursive: true });
    await writeFile(path.join(t, 'a', 'f'), 'x');
    await symlink(outside, path.join(t, 'link'));
    expect((await walkBeneath(t, '', { maxEntries: 10 })).map((e) => e.path)).toEqual(['a', 'a/f', 'link']);
    await expect(walkBeneath(t, '', { maxEntries: 2 })).rejects.toThrow(/more than 2 files and folders/);
  });

  it('chown changes the links, not what they point at; removal removes the links, not their targets', async () => {
    const t = path.join(tmp.dir, 'tree');
    await mkdir(path.join(t, 'd'), { recursive: true });
    await writeFile(path.join(t, 'd', 'f'), 'x');
    await symlink(outside, path.join(t, 'd', 'to-dir'));
    await symlink(path.join(outside, 'secret.txt'), path.join(t, 'to-file'));
    await chownBeneath(t, { uid: 65534, gid: 65534 });
    expect(lstatSync(path.join(t, 'd', 'f')).uid).toBe(65534);
    expect(lstatSync(path.join(t, 'to-file')).uid).toBe(65534);
    expect(lstatSync(outside).uid).toBe(0);
    expect(lstatSync(path.join(outside, 'secret.txt')).uid).toBe(0);
    await removeTree(t);
    expect(existsSync(t)).toBe(false);
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE-SECRET\n');
    await expect(removeTree(t)).resolves.toBeUndefined();
  });
});

describe('writing', () => {
  it('never writes through a symlink, into a FIFO (without blocking) or into a hard-linked file; a new file goes to its owner', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'w-link'));
    await expect(writeBeneath(root, 'w-link', 'pwn', { owner: null })).rejects.toThrow(/symlink/);
    execFileSync('mkfifo', [path.join(root, 'w-fifo')]);
    await expect(writeBeneath(root, 'w-fifo', 'pwn', { owner: null })).rejects.toThrow(/FIFO/);
    await link(path.join(outside, 'secret.txt'), path.join(root, 'w-hard'));
    await expect(writeBeneath(root, 'w-hard', 'pwn', { owner: null })).rejects.toThrow(/hard links/);
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE-SECRET\n');
    await writeBeneath(root, 'real/new.cu', 'new\n', { owner: { uid: 65534, gid: 65534 } });
    expect(lstatSync(path.join(root, 'real', 'new.cu')).uid).toBe(65534);
    expect(await readFile(path.join(root, 'real', 'new.cu'), 'utf8')).toBe('new\n');
  });
});
