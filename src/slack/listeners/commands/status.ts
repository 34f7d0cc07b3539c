import { describeRun } from '../../agent-port.js';
import { createRunExtrasCache } from '../../reporter/run-extras.js';
import { renderStatusReply } from '../../views/lists.js';
import type { CommandContext } from './command-context.js';
import { getVisibleRun } from './visible-run.js';

/** `/kernelseek status [run]`: the run's card, to the asker alone; without an id, this channel's latest run. */
export async function handleStatusCommand(ctx: CommandContext, runId: string | undefined): Promise<void> {
  const { deps } = ctx;
  let view;
  if (runId) {
    view = await getVisibleRun(ctx, runId);
  } else {
    const recent = await deps.store.runs.list({ limit: 200 });
    const here = recent.find((r) => r.slackChannel === ctx.channel);
    if (!here) return ctx.reply('No run has been started in this channel yet. `/kernelseek list` shows this channel\'s runs; `/kernelseek start <task>` starts one.');
    view = describeRun(here);
  }
  const extras = await createRunExtrasCache(deps.store).get(view.id);
  await ctx.reply(renderStatusReply(view, extras));
}
