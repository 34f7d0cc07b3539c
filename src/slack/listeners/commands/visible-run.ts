import { UserInputError } from '../../../core/errors.js';
import type { RunView } from '../../agent-port.js';
import { canSee } from '../../auth.js';
import type { CommandContext } from './command-context.js';

/**
 * The run `runId` as the asker may see it. A run of another channel is refused in the same words as
 * a run that does not exist, so nobody learns another channel's run ids, owners or progress by
 * guessing. Its owner may still reach their own run from anywhere.
 */
export async function getVisibleRun(ctx: CommandContext, runId: string): Promise<RunView> {
  const unknown = () => new UserInputError(`There is no run '${runId}' in this channel. \`/kernelseek list\` shows this channel's runs.`, { code: 'run_unknown' });
  let view: RunView;
  try {
    view = await ctx.deps.control.getStatus(runId);
  } catch (error) {
    if (error instanceof UserInputError && error.code === 'run_unknown') throw unknown();
    throw error;
  }
  if (view.owner === ctx.user || canSee(ctx.deps.slack, ctx.user, ctx.channel, view.slack?.channel)) return view;
  throw unknown();
}
