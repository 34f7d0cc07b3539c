import { renderBankList } from '../../views/lists.js';
import type { CommandContext } from './command-context.js';

/** `/kernelseek bank`: the question bank with how each question has done. */
export async function handleBankCommand(ctx: CommandContext): Promise<void> {
  if (!ctx.deps.bank) return ctx.reply('The question bank is not connected to this KernelSeek deployment; `kernelseek bank` on the server lists it.');
  await ctx.reply(renderBankList(await ctx.deps.bank.list()));
}
