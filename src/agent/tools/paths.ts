import { lstat, realpath } from 'node:fs/promises';
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
