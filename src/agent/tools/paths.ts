import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';

/** The model asked for something a tool refuses (outside the workspace, bad input). Shown to it as an error result. */
export class ToolInputError extends Error {}

async function deepestExisting(p: string): Promise<{ existing: string; rest: string[] }> {
  const rest: string[] = [];
  let current = p;
  for (;;) {
    try {
      await lstat(current);
      return { existing: current, rest };
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return { existing: current, rest };
      rest.unshift(path.basename(current));
      current = parent;
    }
  }
}

const inside = (root: string, p: string) => p === root || p.startsWith(root + path.sep);

/**
 * Resolves a path the model gave (absolute, or relative to the workspace) to a real path inside the
 * workspace. Refuses absolute paths elsewhere, `..` escapes and symlinks that lead out, including
 * symlinked parent folders of a file that does not exist yet.
 */
export async function resolveInWorkspace(root: string, requested: string): Promise<string> {
  if (typeof requested !== 'string' || requested.trim() === '') throw new ToolInputError('`path` is required');
  if (requested.includes('\0')) throw new ToolInputError('`path` contains a NUL byte');
  const lexical = path.resolve(root, requested);
  if (!inside(root, lexical)) {
    throw new ToolInputError(`${requested} is outside the workspace ${root}; every file you work on lives there`);
  }
  const { existing, rest } = await deepestExisting(lexical);
  const real = await realpath(existing);
  if (!inside(root, real)) {
    throw new ToolInputError(`${requested} resolves (through a symlink) to ${real}, outside the workspace ${root}`);
  }
  return path.join(real, ...rest);
}
