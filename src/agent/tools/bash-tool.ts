import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ToolContext, ToolResult } from './tool-types.js';
import { ToolInputError } from './paths.js';
import { probeNetworkIsolation, runCommand, toolEnvironment } from './sandbox.js';

/**
 * The `bash` tool (type bash_20250124). Each command runs in a fresh shell in the workspace (a run's
 * turns may execute on different workers, so no shell survives between calls); `restart` is
 * accepted and answered as a no-op.
 */
export async function runBashTool(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  if (input.restart === true) return { content: 'The shell was restarted (every command already runs in a fresh shell in the workspace).', isError: false };
  const command = input.command;
  if (typeof command !== 'string' || command.trim() === '') throw new ToolInputError('`command` is required');
  const isolation = ctx.config.agent.bash.network === 'allow' ? { kind: 'none' as const, why: 'KERNELSEEK_BASH_NETWORK=allow' } : probeNetworkIsolation();
  if (isolation.kind === 'none' && ctx.config.agent.bash.network === 'isolate') {
    return { content: `bash is disabled on this host: KERNELSEEK_BASH_NETWORK=isolate, but ${isolation.why}.`, isError: true };
  }
  const env = toolEnvironment(ctx.config.agent, ctx.config.harness, ctx.workspace.homeDir);
  await mkdir(path.join(ctx.workspace.homeDir, 'tmp'), { recursive: true });
  const timeoutSeconds = ctx.config.agent.bash.timeoutSeconds;
  const result = await runCommand(command, {
    cwd: ctx.workspace.dir,
    env,
    timeoutMs: timeoutSeconds * 1000,
    outputCap: ctx.config.agent.bash.outputCapChars,
    isolation,
    signal: ctx.signal,
  });
  const notes: string[] = [];
  if (result.timedOut) notes.push(`[the command was killed after ${timeoutSeconds} s, the time limit per command]`);
  else if (result.exitCode !== 0) notes.push(`[exit status ${result.exitCode ?? `signal ${result.signal}`}]`);
  const body = result.output.trim() === '' ? '(no output)' : result.output;
  return { content: notes.length ? `${body}\n${notes.join('\n')}` : body, isError: result.timedOut || result.exitCode !== 0 };
}
