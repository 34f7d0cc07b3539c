import { AppError } from '../../core/errors.js';
import { runBashTool } from './bash-tool.js';
import { runEvaluateTool } from './evaluate-tool.js';
import { runGpuBashTool } from './gpu-bash-tool.js';
import { ToolInputError } from './paths.js';
import { runTextEditorTool } from './text-editor-tool.js';
import type { ToolContext, ToolResult } from './tool-types.js';

const TOOLS: Record<string, (input: Record<string, unknown>, ctx: ToolContext) => Promise<ToolResult>> = {
  bash: runBashTool,
  str_replace_based_edit_tool: runTextEditorTool,
  evaluate: runEvaluateTool,
  gpu_bash: runGpuBashTool,
};

const AGENT_FIXABLE = new Set(['workspace_too_large', 'workspace_file_refused', 'archive_too_large', 'archive_invalid']);

/** A one-line description of a call, for progress lines and status. */
export function describeToolCall(name: string, input: Record<string, unknown>): string {
  const clip = (s: unknown) => String(s ?? '').replace(/\s+/g, ' ').slice(0, 100);
  switch (name) {
    case 'bash':
    case 'gpu_bash':
      return `${name}: ${clip(input.command)}`;
    case 'str_replace_based_edit_tool':
      return `edit: ${clip(input.command)} ${clip(input.path)}`;
    case 'evaluate':
      return `evaluate (${clip(input.scenarios ?? 'run set')})`;
    default:
      return name;
  }
}

/**
 * Runs one tool call. The model's mistakes (bad input, a path outside the workspace, an unknown
 * tool) come back to it as error results it can act on; infrastructure failures (the dispatcher
 * down, the database gone) are thrown, so the turn fails and is retried with the call unanswered.
 */
export async function executeTool(name: string, input: unknown, ctx: ToolContext): Promise<ToolResult> {
  const tool = TOOLS[name];
  if (!tool) return { content: `Unknown tool '${name}'. The tools are: ${Object.keys(TOOLS).join(', ')}.`, isError: true };
  if (!input || typeof input !== 'object' || Array.isArray(input)) return { content: 'The tool input must be a JSON object.', isError: true };
  try {
    return await tool(input as Record<string, unknown>, ctx);
  } catch (error) {
    if (error instanceof ToolInputError) return { content: error.message, isError: true };
    // What the agent's files or workspace caused (refused files, too large, a bad snapshot): the model's to fix.
    if (error instanceof AppError && AGENT_FIXABLE.has(error.code)) return { content: error.message, isError: true };
    const code = (error as NodeJS.ErrnoException).code;
    if (code && ['ENOENT', 'EISDIR', 'ENOTDIR', 'EACCES', 'EEXIST', 'ENOTEMPTY'].includes(code)) {
      return { content: (error as Error).message, isError: true };
    }
    throw error;
  }
}
