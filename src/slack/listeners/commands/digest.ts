import { canPostDigest } from '../../auth.js';
import type { CommandContext } from './command-context.js';

/** `/kernelseek digest [day|week]`: post the digest of the last day (or week) in this channel now. */
export async function handleDigestCommand(ctx: CommandContext, window?: 'day' | 'week'): Promise<void> {
  const allowed = canPostDigest(ctx.deps.slack, ctx.user);
  if (!allowed.ok) return ctx.reply(`:no_entry: ${allowed.reason}`);
  if (!ctx.deps.digest) return ctx.reply('The daily digest is not connected to this KernelSeek deployment; `kernelseek digest --print` on the server shows it.');
  await ctx.reply(await ctx.deps.digest.postNow({ channel: ctx.channel, by: ctx.user, window }));
}
