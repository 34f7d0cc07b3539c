import { constants, type Stats } from 'node:fs';
import { chown, lchown, mkdir, open, readdir, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { AppError } from './errors.js';

/**
 * The one way the host (this Node process, often root) touches a file that a sandbox could have
 * written: a run's workspace, a gpu_bash snapshot's folder, a harness's output folder. Everything
 * there is hostile input: a symlink to /proc/self/environ or /etc/shadow, a FIFO that blocks a
 * reader forever, a device, a folder swapped for a link between a check and a use, a file of 10 GB,
 * NUL bytes.
 *
 * Node has no openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so each name of a path is opened on
 * its own, with O_PATH | O_NOFOLLOW, through `/proc/self/fd/<folder fd>/<name>`: every lookup starts
 * from the folder already opened (a rename of a folder higher up changes nothing), no name is ever
 * followed when it is a symlink (the entry itself is opened and refused), and `..` is never a name.
 * A file is judged by fstat on that O_PATH descriptor, before anything opens it for reading (opening
 * a FIFO or a device can block or act), then reopened through the same descriptor with O_NONBLOCK,
 * so what is read is what was judged.
 */

/** A file of a workspace the host will not read or write; `message` is for the model (what to do). */
export class WorkspaceFileError extends AppError {
  /** The path (or a folder on it) does not exist, as opposed to being refused. */
  readonly missing: boolean;
  constructor(message: string, options: { missing?: boolean } = {}) {
    super('workspace_file_refused', message);
    this.missing = options.missing ?? false;
  }
}

/** Linux's O_PATH (the same value on x86-64 and arm64; Node's constants lack it). */
const O_PATH = 0o10000000;
const PATH_FLAGS = O_PATH | constants.O_NOFOLLOW;

/** Who should own what the host creates in a workspace (the sandbox's uid when the service is root). */
export interface Owner {
  uid: number;
  gid: number;
}

export interface ReadOptions {
  /** The largest file read (bytes); larger ones are refused without being read. */
  maxBytes: number;
  /** How the path is named in messages (as the agent's commands see it). */
  shown?: string;
}

const at = (folder: FileHandle, name: string) => `/proc/self/fd/${folder.fd}/${name}`;

/**
 * The names of a path relative to the workspace. Refuses an absolute path, `..`, a NUL byte: the
 * host never resolves a path outside the folder it was given.
 */
export function namesOf(relative: string): string[] {
  if (relative.includes('\0')) throw new WorkspaceFileError(`the path ${JSON.stringify(relative)} contains a NUL byte`);
  if (relative.startsWith('/')) throw new WorkspaceFileError(`${relative} is an absolute path; the host reads only paths relative to the workspace`);
  const names = relative.split('/').filter((n) => n !== '' && n !== '.');
  if (names.includes('..')) throw new WorkspaceFileError(`${relative} goes up (..) out of its folder; the host does not follow it`);
  return names;
}

function kindOf(st: Stats): string {
  if (st.isSymbolicLink()) return 'a symlink';
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device file';
  return 'a regular file';
}

async function openPath(path: string, shown: string): Promise<{ handle: FileHandle; st: Stats } | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, PATH_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ENOTDIR') throw new WorkspaceFileError(`${shown}: a name on the way is not a folder`);
    throw error;
  }
  try {
    return { handle, st: await handle.stat() };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Opens the folder `names` beneath `root` (O_PATH), refusing a symlink or anything else than a
 * folder at any step. `root` is the host's own path (trusted); the caller closes the handle.
 */
async function openFolder(root: string, names: string[], shown: string): Promise<FileHandle> {
  let folder = await open(root, O_PATH | constants.O_DIRECTORY);
  try {
    for (let i = 0; i < names.length; i++) {
      const step = names.slice(0, i + 1).join('/');
      const next = await openPath(at(folder, names[i]!), shown);
      if (!next) throw new WorkspaceFileError(`${shown} does not exist (no folder ${step})`, { missing: true });
      if (!next.st.isDirectory()) {
        await next.handle.close();
        const what = kindOf(next.st);
        throw new WorkspaceFileError(
          what === 'a symlink'
            ? `${shown} goes through a symlink (${step}); the host does not follow symlinks in the workspace. Use the real folder.`
            : `${shown}: ${step} is ${what}, not a folder`,
        );
      }
      await folder.close();
      folder = next.handle;
    }
    return folder;
  } catch (error) {
    await folder.close().catch(() => undefined);
    throw error;
  }
}

/** Refuses what is not a regular file of one link, or is larger than `maxBytes`. */
function judge(st: Stats, shown: string, maxBytes: number): void {
  if (!st.isFile()) {
    const what = kindOf(st);
    const hint = what === 'a symlink' ? ': the host does not follow symlinks; make it a regular file (cp the target to it)' : what === 'a folder' ? '' : ', not a regular file';
    throw new WorkspaceFileError(`${shown} is ${what}${hint}`);
  }
  if (st.nlink > 1) {
    throw new WorkspaceFileError(`${shown} has ${st.nlink} hard links; the host reads only files of one link (one could be a trusted file elsewhere). Copy it (cp) to a new file.`);
  }
  if (st.size > maxBytes) throw new WorkspaceFileError(`${shown} is ${st.size} bytes; at most ${maxBytes} are read`);
}

/**
 * Opens an entry beneath `root` without following any symlink and returns its O_PATH handle and
 * fstat, or undefined when it does not exist. The caller closes the handle.
 */
export async function lookBeneath(root: string, relative: string, shown = relative): Promise<{ handle: FileHandle; st: Stats } | undefined> {
  const names = namesOf(relative);
  if (names.length === 0) {
    const handle = await open(root, O_PATH | constants.O_DIRECTORY);
    return { handle, st: await handle.stat() };
  }
  const folder = await openFolder(root, names.slice(0, -1), shown);
  try {
    return await openPath(at(folder, names.at(-1)!), shown);
  } finally {
    await folder.close();
  }
}

async function readWhole(handle: FileHandle, maxBytes: number, shown: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const buffer = Buffer.alloc(Math.min(1 << 20, maxBytes + 1 - total));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
    // It grew while being read: whoever writes it is not waited for.
    if (total > maxBytes) throw new WorkspaceFileError(`${shown} is more than ${maxBytes} bytes; at most ${maxBytes} are read`);
  }
  return Buffer.concat(chunks, total);
}

/**
 * The bytes of the regular file `relative` beneath `root` (see the module comment). A symlink
 * anywhere on the path, a FIFO, socket, device or folder, a hard-linked file, or one over
 * `maxBytes` is refused with a WorkspaceFileError that names it; nothing blocks.
 */
export async function readBeneath(root: string, relative: string, options: ReadOptions): Promise<Buffer> {
  const shown = options.shown ?? relative;
  const entry = await lookBeneath(root, relative, shown);
  if (!entry) throw new WorkspaceFileError(`${shown} does not exist`, { missing: true });
  try {
    judge(entry.st, shown, options.maxBytes);
    // Reopening the O_PATH descriptor opens that very inode; O_NONBLOCK in case it is not what fstat said.
    const file = await open(`/proc/self/fd/${entry.handle.fd}`, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    try {
      const st = await file.stat();
      if (st.ino !== entry.st.ino || st.dev !== entry.st.dev) throw new WorkspaceFileError(`${shown} changed while it was opened`);
      judge(st, shown, options.maxBytes);
      return await readWhole(file, options.maxBytes, shown);
    } finally {
      await file.close();
    }
  } finally {
    await entry.handle.close();
  }
}

/** The offset of the first byte that is not part of valid UTF-8, or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    let n: number;
    let min: number;
    if (b < 0x80) {
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) [n, min] = [1, 0x80];
    else if (b >= 0xe0 && b <= 0xef) [n, min] = [2, 0x800];
    else if (b >= 0xf0 && b <= 0xf4) [n, min] = [3, 0x10000];
    else return i;
    let cp = b & (0x3f >> n);
    for (let k = 1; k <= n; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += n + 1;
  }
  return -1;
}

/**
 * Source text: UTF-8 without NUL bytes, or a WorkspaceFileError saying where it is not (a NUL
 * byte cannot be stored as PostgreSQL text, and a kernel that is not text is not a kernel).
 */
export function decodeSource(bytes: Buffer, shown: string): string {
  const line = (offset: number) => bytes.subarray(0, offset).toString('latin1').split('\n').length;
  const nul = bytes.indexOf(0);
  if (nul >= 0) throw new WorkspaceFileError(`${shown} contains a NUL byte (line ${line(nul)}, byte ${nul}); a source file must be text`);
  const bad = firstInvalidUtf8(bytes);
  if (bad >= 0) throw new WorkspaceFileError(`${shown} is not valid UTF-8 (line ${line(bad)}, byte ${bad}); save it as UTF-8 text`);
  return bytes.toString('utf8');
}

/** `readBeneath`, as source text (`decodeSource`). */
export async function readTextBeneath(root: string, relative: string, options: ReadOptions): Promise<string> {
  return decodeSource(await readBeneath(root, relative, options), options.shown ?? relative);
}

export interface TreeEntry {
  /** Relative to the folder walked, `/`-separated. */
  path: string;
  st: Stats;
}

/**
 * Every entry beneath the folder `relative` of `root` (depth first, names sorted), never following
 * a symlink (a link is an entry, not a way in). Stops with a WorkspaceFileError past `maxEntries`.
 * `skip` leaves a path (and what is under it) out.
 */
export async function walkBeneath(root: string, relative: string, options: { maxEntries: number; skip?: (path: string) => boolean; shown?: string }): Promise<TreeEntry[]> {
  const shown = options.shown ?? (relative || '.');
  const out: TreeEntry[] = [];
  const visit = async (folder: FileHandle, prefix: string): Promise<void> => {
    const names = (await readdir(`/proc/self/fd/${folder.fd}`)).sort();
    for (const name of names) {
      const rel = prefix ? `${prefix}/${name}` : name;
      if (options.skip?.(rel)) continue;
      const entry = await openPath(at(folder, name), rel);
      if (!entry) continue; // removed meanwhile
      try {
        out.push({ path: rel, st: entry.st });
        if (out.length > options.maxEntries) throw new WorkspaceFileError(`${shown} holds more than ${options.maxEntries} files and folders`);
        if (entry.st.isDirectory()) await visit(entry.handle, rel);
      } finally {
        await entry.handle.close();
      }
    }
  };
  const top = await openFolder(root, namesOf(relative), shown);
  try {
    await visit(top, '');
  } finally {
    await top.close();
  }
  return out;
}

/**
 * The text of every file in the folder `relative` (a kernel of several files): each a regular
 * file (no symlink, FIFO, device), source text, all together at most `maxBytes`.
 */
export async function readFolderBeneath(root: string, relative: string, options: ReadOptions & { maxFiles: number }): Promise<{ path: string; text: string }[]> {
  const shown = options.shown ?? relative;
  const entries = await walkBeneath(root, relative, { maxEntries: options.maxFiles, shown });
  const out: { path: string; text: string }[] = [];
  let total = 0;
  for (const entry of entries) {
    if (entry.st.isDirectory()) continue;
    const name = `${shown.replace(/\/$/, '')}/${entry.path}`;
    judge(entry.st, name, options.maxBytes - total);
    const text = await readTextBeneath(root, `${relative}/${entry.path}`, { maxBytes: options.maxBytes - total, shown: name });
    total += Buffer.byteLength(text);
    out.push({ path: entry.path, text });
  }
  return out;
}

/**
 * Gives every entry beneath `root` (and `root`) to `owner`, never following a symlink: lchown
 * through the folder's descriptor changes the link itself, whatever it points at.
 */
export async function chownBeneath(root: string, owner: Owner): Promise<void> {
  const top = await open(root, O_PATH | constants.O_DIRECTORY);
  try {
    // chown, not lchown: /proc/self/fd/N is the magic link to the folder itself, followed on purpose.
    await chown(`/proc/self/fd/${top.fd}`, owner.uid, owner.gid);
    const visit = async (folder: FileHandle): Promise<void> => {
      for (const name of await readdir(`/proc/self/fd/${folder.fd}`)) {
        const entry = await openPath(at(folder, name), name);
        if (!entry) continue;
        try {
          if (entry.st.uid !== owner.uid || entry.st.gid !== owner.gid) await lchown(at(folder, name), owner.uid, owner.gid);
          if (entry.st.isDirectory()) await visit(entry.handle);
        } finally {
          await entry.handle.close();
        }
      }
    };
    await visit(top);
  } finally {
    await top.close();
  }
}

/** Creates the folder `relative` beneath `root` and any missing ones on the way (given to `owner`). */
export async function mkdirBeneath(root: string, relative: string, owner: Owner | null, shown = relative): Promise<void> {
  const names = namesOf(relative);
  let folder = await open(root, O_PATH | constants.O_DIRECTORY);
  try {
    for (let i = 0; i < names.length; i++) {
      const path = at(folder, names[i]!);
      let entry = await openPath(path, shown);
      if (!entry) {
        await mkdir(path).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error;
        });
        if (owner) await lchown(path, owner.uid, owner.gid);
        entry = await openPath(path, shown);
        if (!entry) throw new WorkspaceFileError(`${shown}: ${names.slice(0, i + 1).join('/')} vanished while it was made`);
      }
      if (!entry.st.isDirectory()) {
        await entry.handle.close();
        throw new WorkspaceFileError(`${shown}: ${names.slice(0, i + 1).join('/')} is ${kindOf(entry.st)}, not a folder`);
      }
      await folder.close();
      folder = entry.handle;
    }
  } finally {
    await folder.close();
  }
}

/**
 * Writes `data` to the file `relative` beneath `root` (created when absent, given to `owner`):
 * never through a symlink, never into a FIFO or device (O_NONBLOCK, then fstat), never into a
 * hard-linked file; checked before it is truncated.
 */
export async function writeBeneath(root: string, relative: string, data: string | Buffer, options: { owner: Owner | null; shown?: string; mode?: number }): Promise<void> {
  const shown = options.shown ?? relative;
  const names = namesOf(relative);
  if (names.length === 0) throw new WorkspaceFileError(`${shown} is a folder`);
  const folder = await openFolder(root, names.slice(0, -1), shown);
  let file: FileHandle;
  try {
    file = await open(at(folder, names.at(-1)!), constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY, options.mode ?? 0o644).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ELOOP') throw new WorkspaceFileError(`${shown} is a symlink; the host does not write through symlinks`);
        if (error.code === 'ENXIO') throw new WorkspaceFileError(`${shown} is a FIFO or socket, not a regular file`);
        if (error.code === 'EISDIR') throw new WorkspaceFileError(`${shown} is a folder`);
        throw error;
      },
    );
  } finally {
    await folder.close();
  }
  try {
    const st = await file.stat();
    judge(st, shown, Number.MAX_SAFE_INTEGER);
    if (options.owner && (st.uid !== options.owner.uid || st.gid !== options.owner.gid)) await file.chown(options.owner.uid, options.owner.gid);
    await file.truncate(0);
    await file.writeFile(data);
  } finally {
    await file.close();
  }
}

/** lstat of a path beneath `root` without following symlinks on the way; undefined when absent. */
export async function statBeneath(root: string, relative: string): Promise<Stats | undefined> {
  const entry = await lookBeneath(root, relative).catch((error: unknown) => {
    if (error instanceof WorkspaceFileError && error.missing) return undefined;
    throw error;
  });
  if (!entry) return undefined;
  await entry.handle.close();
  return entry.st;
}

/**
 * Removes the folder `root` and everything in it, never following a symlink even while something
 * still running renames folders and plants links in it (rm -r by path would follow a folder swapped
 * for a link to /etc between its check and its unlinks): every name is removed through the
 * descriptor of the folder it was found in. A missing `root` is not an error.
 */
export async function removeTree(root: string): Promise<void> {
  let top: FileHandle;
  try {
    top = await open(root, O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const empty = async (folder: FileHandle): Promise<void> => {
    for (const name of await readdir(`/proc/self/fd/${folder.fd}`)) {
      const entry = await openPath(at(folder, name), name);
      if (!entry) continue;
      try {
        if (entry.st.isDirectory()) await empty(entry.handle);
      } finally {
        await entry.handle.close();
      }
      const gone = (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      };
      if (entry.st.isDirectory()) await rmdir(at(folder, name)).catch(gone);
      else await unlink(at(folder, name)).catch(gone);
    }
  };
  try {
    await empty(top);
  } finally {
    await top.close();
  }
  await rmdir(root);
}
