import { constants } from 'node:fs';
import { lstat, open, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { SANDBOX_WORKSPACE } from './sandbox.js';

/** The model asked for something a tool refuses (outside the workspace, bad input). Shown to it as an error result. */
export class ToolInputError extends Error {}

const inside = (root: string, p: string) => p === root || p.startsWith(root + path.sep);

/**
 * Resolves a path the model gave (relative to the workspace, absolute under /workspace as its
 * commands see it, or the workspace's host path) to a path inside the workspace. Refuses absolute
 * paths elsewhere, `..` escapes, and any symlink on the way (inside the workspace or not: a link is
 * how a command points the editor, which runs outside the sandbox, at a trusted file).
 */
export async function resolveInWorkspace(root: string, requested: string): Promise<string> {
  if (typeof requested !== 'string' || requested.trim() === '') throw new ToolInputError('`path` is required');
  if (requested.includes('\0')) throw new ToolInputError('`path` contains a NUL byte');
  const mapped = inside(SANDBOX_WORKSPACE, requested) ? path.join(root, path.relative(SANDBOX_WORKSPACE, requested)) : requested;
  const lexical = path.resolve(root, mapped);
  if (!inside(root, lexical)) {
    throw new ToolInputError(`${requested} is outside the workspace ${SANDBOX_WORKSPACE}; every file you work on lives there`);
  }
  let current = root;
  for (const part of path.relative(root, lexical).split(path.sep).filter(Boolean)) {
    current = path.join(current, part);
    const st = await lstat(current).catch(() => undefined);
    if (!st) break;
    if (st.isSymbolicLink()) throw new ToolInputError(`${requested} goes through a symlink (${path.relative(root, current)}); the editor does not follow symlinks. Edit the file itself.`);
  }
  const real = await realpath(root);
  if (real !== root) throw new ToolInputError(`the workspace ${root} is not a real path`);
  return lexical;
}

/** How a tool names a workspace file to the model: as its commands see it. */
export function shownPath(root: string, file: string, sandboxed: boolean): string {
  return sandboxed ? path.join(SANDBOX_WORKSPACE, path.relative(root, file)) : file;
}

async function checked(handle: FileHandle, shown: string): Promise<FileHandle> {
  const st = await handle.stat();
  let problem: string | undefined;
  if (!st.isFile()) problem = `${shown} is not a regular file`;
  else if (st.nlink > 1) problem = `${shown} has ${st.nlink} hard links; the editor refuses hard-linked files (one could be a trusted file elsewhere). Copy it (cp) to a new file and edit that`;
  if (problem) {
    await handle.close();
    throw new ToolInputError(problem);
  }
  return handle;
}

/**
 * Opens an existing file for reading without following a symlink (O_NOFOLLOW) and checks what was
 * opened (fstat: a regular file with one link), so the check and the read are of the same file.
 */
export async function openForRead(file: string, shown: string): Promise<FileHandle> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ELOOP') throw new ToolInputError(`${shown} is a symlink; the editor does not follow symlinks`);
    if (error.code === 'ENOENT') throw new ToolInputError(`${shown} does not exist`);
    throw error;
  });
  return checked(handle, shown);
}

/** Writes a file (created when absent) the same way: no symlink, no hard link, checked before truncating. */
export async function writeChecked(file: string, shown: string, text: string): Promise<void> {
  const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ELOOP') throw new ToolInputError(`${shown} is a symlink; the editor does not follow symlinks`);
    if (error.code === 'ENXIO') throw new ToolInputError(`${shown} is not a regular file`);
    throw error;
  });
  await checked(handle, shown);
  try {
    await handle.truncate(0);
    await handle.write(text, 0, 'utf8');
  } finally {
    await handle.close();
  }
}
