import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { mkdirBeneath, readTextBeneath, WorkspaceFileError, writeBeneath } from '../../core/safe-read.js';
import { capText } from './output-cap.js';
import { resolveInWorkspace, shownPath, ToolInputError } from './paths.js';
import { sandboxOwner } from './sandbox.js';
import type { ToolContext, ToolResult } from './tool-types.js';

/** Files larger than this are not loaded whole (the agent can view ranges with bash instead). */
const MAX_FILE_BYTES = 2 * 1024 * 1024;
export const VIEW_MAX_CHARACTERS = 40_000;

const str = (input: Record<string, unknown>, key: string): string => {
  const v = input[key];
  if (typeof v !== 'string') throw new ToolInputError(`\`${key}\` is required and must be a string`);
  return v;
};

/** A workspace file's text, read beneath the workspace (src/core/safe-read.ts: no symlink, FIFO, device, hard link). */
async function readText(root: string, file: string, shown: string): Promise<string> {
  try {
    return await readTextBeneath(root, path.relative(root, file), { maxBytes: MAX_FILE_BYTES, shown });
  } catch (error) {
    if (error instanceof WorkspaceFileError && / bytes; at most /.test(error.message)) {
      throw new ToolInputError(`${error.message}: too large to edit here; use bash (head, sed, split)`);
    }
    if (error instanceof WorkspaceFileError && /NUL byte|not valid UTF-8/.test(error.message)) {
      throw new ToolInputError(`${error.message}. The editor edits text only; use bash for other files.`);
    }
    throw error;
  }
}

/** Writes a workspace file the same way; one the engine creates belongs to the sandbox's user. */
async function writeText(ctx: ToolContext, file: string, shown: string, text: string): Promise<void> {
  const root = ctx.workspace.dir;
  await writeBeneath(root, path.relative(root, file), text, { owner: sandboxOwner(ctx.workspace.runId), shown });
}

async function listDirectory(root: string, dir: string, shown: string): Promise<string> {
  const lines: string[] = [];
  const walk = async (d: string, depth: number) => {
    const entries = (await readdir(d, { withFileTypes: true })).filter((e) => !e.name.startsWith('.')).sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      const full = path.join(d, e.name);
      lines.push(`${path.relative(root, full) || '.'}${e.isDirectory() ? '/' : ''}`);
      // isDirectory() of a Dirent is the entry itself: a symlink to a folder is not walked.
      if (e.isDirectory() && depth < 2) await walk(full, depth + 1);
    }
  };
  await walk(dir, 1);
  return `Files and directories up to 2 levels deep in ${shown} (hidden items excluded):\n${lines.join('\n') || '(empty)'}`;
}

function numbered(text: string, start: number): string {
  return text
    .split('\n')
    .map((line, i) => `${String(start + i).padStart(6)}\t${line}`)
    .join('\n');
}

/**
 * The `str_replace_based_edit_tool` (type text_editor_20250728): view, create, str_replace, insert,
 * confined to the workspace.
 */
export async function runTextEditorTool(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const command = str(input, 'command');
  const file = await resolveInWorkspace(ctx.workspace.dir, str(input, 'path'));
  const shown = shownPath(ctx.workspace.dir, file, ctx.config.agent.sandbox.mode === 'on');
  switch (command) {
    case 'view': {
      const s = await lstat(file).catch(() => undefined);
      if (!s) throw new ToolInputError(`${shown} does not exist`);
      if (s.isDirectory()) return { content: await listDirectory(ctx.workspace.dir, file, shown), isError: false };
      const lines = (await readText(ctx.workspace.dir, file, shown)).split('\n');
      let start = 1;
      let end = lines.length;
      if (input.view_range !== undefined) {
        const range = input.view_range;
        if (!Array.isArray(range) || range.length !== 2 || !range.every((n) => Number.isInteger(n))) {
          throw new ToolInputError('`view_range` must be two integers [start, end] (end -1 = to the end of the file)');
        }
        start = range[0] as number;
        end = (range[1] as number) === -1 ? lines.length : (range[1] as number);
        if (start < 1 || start > lines.length || end < start || end > lines.length) {
          throw new ToolInputError(`\`view_range\` [${range.join(', ')}] is outside the file's lines 1-${lines.length}`);
        }
      }
      return { content: capText(numbered(lines.slice(start - 1, end).join('\n'), start), VIEW_MAX_CHARACTERS), isError: false };
    }
    case 'create': {
      const text = str(input, 'file_text');
      await mkdirBeneath(ctx.workspace.dir, path.relative(ctx.workspace.dir, path.dirname(file)), sandboxOwner(ctx.workspace.runId), shown);
      const existed = await lstat(file).then(() => true, () => false);
      await writeText(ctx, file, shown, text);
      return { content: `${existed ? 'Overwrote' : 'Created'} ${shown} (${text.split('\n').length} lines).`, isError: false };
    }
    case 'str_replace': {
      const oldStr = str(input, 'old_str');
      const newStr = typeof input.new_str === 'string' ? input.new_str : '';
      if (oldStr === '') throw new ToolInputError('`old_str` must not be empty');
      const text = await readText(ctx.workspace.dir, file, shown);
      const count = text.split(oldStr).length - 1;
      if (count === 0) throw new ToolInputError(`No match for \`old_str\` in ${shown}; nothing was replaced. View the file to copy the exact text (whitespace included).`);
      if (count > 1) throw new ToolInputError(`\`old_str\` occurs ${count} times in ${shown}; include more surrounding lines so it is unique. Nothing was replaced.`);
      const at = text.indexOf(oldStr);
      const updated = text.slice(0, at) + newStr + text.slice(at + oldStr.length);
      await writeText(ctx, file, shown, updated);
      const firstLine = text.slice(0, at).split('\n').length;
      const snippetLines = updated.split('\n').slice(Math.max(0, firstLine - 4), firstLine + newStr.split('\n').length + 3);
      return { content: `Replaced in ${shown}. The edited region:\n${numbered(snippetLines.join('\n'), Math.max(1, firstLine - 3))}`, isError: false };
    }
    case 'insert': {
      const line = input.insert_line;
      const insertText = typeof input.insert_text === 'string' ? input.insert_text : typeof input.new_str === 'string' ? input.new_str : undefined;
      if (!Number.isInteger(line)) throw new ToolInputError('`insert_line` must be an integer (0 inserts at the top)');
      if (insertText === undefined) throw new ToolInputError('`insert_text` is required');
      const lines = (await readText(ctx.workspace.dir, file, shown)).split('\n');
      if ((line as number) < 0 || (line as number) > lines.length) throw new ToolInputError(`\`insert_line\` must be between 0 and ${lines.length}`);
      lines.splice(line as number, 0, ...insertText.split('\n'));
      await writeText(ctx, file, shown, lines.join('\n'));
      return { content: `Inserted ${insertText.split('\n').length} line(s) after line ${line as number} of ${shown}.`, isError: false };
    }
    case 'undo_edit':
      throw new ToolInputError('undo_edit is not available; every evaluated candidate is a git commit in the workspace (use `git diff`, `git checkout <commit> -- <file>` in bash)');
    default:
      throw new ToolInputError(`unknown command '${command}'; use view, create, str_replace or insert`);
  }
}
