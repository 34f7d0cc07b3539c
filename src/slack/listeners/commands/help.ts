import { renderHelp } from '../../views/lists.js';
import type { CommandContext } from './command-context.js';

/** `/kernelseek help` (and `/kernelseek` alone). */
export async function handleHelpCommand(ctx: CommandContext): Promise<void> {
  await ctx.reply(renderHelp());
}
