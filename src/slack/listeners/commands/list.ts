import { isTerminal } from '../../../db/index.js';
import { describeRun } from '../../agent-port.js';
import { canSee, isAdmin } from '../../auth.js';
import { renderRunList } from '../../views/lists.js';
import type { CommandContext } from './command-context.js';

/** How many recent runs are read to find the ones the asker may see. */
const SCAN = 300;
const SHOWN = 25;

/**
 * `/kernelseek list`: live runs first, then the most recent finished ones — this channel's runs
 * (whose threads its members see anyway); an admin sees every channel's.
 */
export async function handleListCommand(ctx: CommandContext): Promise<void> {
  const { store, slack } = ctx.deps;
  const visible = (await store.runs.list({ limit: SCAN })).filter((r) => canSee(slack, ctx.user, ctx.channel, r.slackChannel));
  const live = visible.filter((r) => !isTerminal(r.status)).slice(0, SHOWN);
  const ended = visible.filter((r) => isTerminal(r.status)).slice(0, Math.max(5, SHOWN - live.length));
  const scope = isAdmin(slack, ctx.user) ? 'every channel (you are an admin)' : 'this channel';
  await ctx.reply(renderRunList([...live, ...ended].map((r) => describeRun(r)), scope));
}
