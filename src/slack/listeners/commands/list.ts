import { describeRun } from '../../agent-port.js';
import { renderRunList } from '../../views/lists.js';
import type { CommandContext } from './command-context.js';

/** `/kernelseek list`: live runs first, then the most recent finished ones. */
export async function handleListCommand(ctx: CommandContext): Promise<void> {
  const { store } = ctx.deps;
  const live = await store.runs.list({ statuses: ['queued', 'running', 'waiting', 'paused'], limit: 25 });
  const recent = await store.runs.list({ statuses: ['finished', 'stopped', 'failed'], limit: Math.max(5, 25 - live.length) });
  await ctx.reply(renderRunList([...live, ...recent].map((r) => describeRun(r))));
}
