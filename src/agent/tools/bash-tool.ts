import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ToolContext, ToolResult } from './tool-types.js';
import { ToolInputError } from './paths.js';
import { bashLimitsSentence, bashSandbox, hostPath, plainEnvironment, refusalMessage, sandboxUnavailable } from './agent-sandbox.js';
import { safeToolText } from './output-cap.js';
import { runSandboxed } from './sandbox-run.js';

/**
 * The `bash` tool (type bash_20250124). Each command runs in a fresh shell in the sandbox (a run's
 * turns may execute on different workers, so no shell survives between calls); `restart` is
 * accepted and answered as a no-op.
 */
export async function runBashTool(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  if (input.restart === true) return { content: 'The shell was restarted (every command already runs in a fresh shell in the workspace).', isError: false };
  const command = input.command;
  if (typeof command !== 'string' || command.trim() === '') throw new ToolInputError('`command` is required');
  const why = sandboxUnavailable(ctx.config);
  if (why) return { content: refusalMessage(why), isError: true };
  const sandboxed = ctx.config.agent.sandbox.mode === 'on';
  if (!sandboxed) await mkdir(path.join(ctx.workspace.homeDir, 'tmp'), { recursive: true });
  const timeoutSeconds = ctx.config.agent.bash.timeoutSeconds;
  const result = await runSandboxed(command, {
    spec: sandboxed ? bashSandbox(ctx.config, ctx.workspace) : null,
    plain: { cwd: ctx.workspace.dir, env: plainEnvironment(ctx.config, ctx.workspace) },
    hostPath: hostPath(ctx.config),
    timeoutMs: timeoutSeconds * 1000,
    outputCap: ctx.config.agent.bash.outputCapChars,
    signal: ctx.signal,
  });
  const notes: string[] = [];
  if (result.timedOut) notes.push(`[the command was killed after ${timeoutSeconds} s, the time limit per command; every process it started was killed with it]`);
  else if (result.exitCode !== 0) notes.push(`[exit status ${result.exitCode ?? `signal ${result.signal}`}]`);
  if (sandboxed && (result.timedOut || result.exitCode !== 0)) notes.push(`[sandbox limits: ${bashLimitsSentence(ctx.config)}; no network]`);
  const body = result.output.trim() === '' ? '(no output)' : result.output;
  return { content: safeToolText(notes.length ? `${body}\n${notes.join('\n')}` : body), isError: result.timedOut || result.exitCode !== 0 };
}
