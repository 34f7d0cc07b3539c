import { snapshotWorkspace } from '../workspace/workspace.js';
import { capText, safeToolText } from './output-cap.js';
import { ToolInputError } from './paths.js';
import type { ToolContext, ToolResult } from './tool-types.js';

/** Archives larger than this are refused (the job travels through Redis). */
export const GPU_BASH_MAX_ARCHIVE_BYTES = 8 * 1024 * 1024;
const MAX_TIMEOUT_SECONDS = 600;

/**
 * The `gpu_bash` tool: runs a command on an evaluation host (a GPU host for cuda tasks) against a
 * snapshot of the workspace. Nothing comes back but the output: the snapshot is thrown away.
 */
export async function runGpuBashTool(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const command = input.command;
  if (typeof command !== 'string' || command.trim() === '') throw new ToolInputError('`command` is required');
  const timeout = input.timeout_seconds === undefined ? 120 : Number(input.timeout_seconds);
  if (!Number.isFinite(timeout) || timeout <= 0 || timeout > MAX_TIMEOUT_SECONDS) {
    throw new ToolInputError(`\`timeout_seconds\` must be between 1 and ${MAX_TIMEOUT_SECONDS}`);
  }
  const pathEnv = ctx.config.agent.bash.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
  let archive: Buffer;
  try {
    archive = await snapshotWorkspace(ctx.workspace, GPU_BASH_MAX_ARCHIVE_BYTES, pathEnv);
  } catch (error) {
    return { content: (error as Error).message, isError: true };
  }
  const seq = await ctx.store.agentRuns.reserveGpuSeq(ctx.run.id, ctx.toolUseId);
  const arch = ctx.task.task.device === 'cuda' ? (ctx.run.arch ?? ctx.task.task.architectures[0]) : undefined;
  const result = await ctx.dispatcher.gpuBash({ runId: ctx.run.id, seq, command, archive, timeoutSeconds: timeout, arch }, { signal: ctx.signal });
  const notes = [`[ran on ${result.worker}${result.gpu ? ` (${result.gpu})` : ''} in ${(result.durationMs / 1000).toFixed(1)} s]`];
  if (result.timedOut) notes.push(`[killed after ${timeout} s]`);
  else if (result.exitCode !== 0) notes.push(`[exit status ${result.exitCode}]`);
  if (result.truncated) notes.push('[output truncated: head and tail kept]');
  const output = capText(result.output.trim() === '' ? '(no output)' : result.output, ctx.config.agent.bash.outputCapChars);
  // A worker of an older version does not escape NULs; the store must never see one.
  return { content: safeToolText(`${output}\n${notes.join('\n')}`), isError: result.timedOut || result.exitCode !== 0 };
}
