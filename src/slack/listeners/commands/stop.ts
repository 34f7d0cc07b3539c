import { canControl } from '../../auth.js';
import type { CommandContext } from './command-context.js';
import { getVisibleRun } from './visible-run.js';

/** `/kernelseek stop <run>`: the owner or an admin ends a run; its summary follows in its thread. */
export async function handleStopCommand(ctx: CommandContext, runId: string): Promise<void> {
  const { deps, user } = ctx;
  const run = await getVisibleRun(ctx, runId);
  const allowed = canControl(deps.slack, user, run);
  if (!allowed.ok) return ctx.reply(`:no_entry: ${allowed.reason}`);
  const stopped = await deps.control.stopRun(runId, { by: user });
  const where = stopped.slack ? ` in <#${stopped.slack.channel}>` : '';
  await ctx.reply(`:octagonal_sign: Stopped \`${runId}\`. Its summary and best kernel are posted in its thread${where}.`);
}
