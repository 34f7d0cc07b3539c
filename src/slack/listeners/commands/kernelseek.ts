import type { App, RespondFn, SlashCommand } from '@slack/bolt';
import { AppError } from '../../../core/errors.js';
import { guardSlackPayload } from '../../../core/mrkdwn.js';
import { canUse } from '../../auth.js';
import type { SlackDeps } from '../../deps.js';
import type { SlackView } from '../../views/format.js';
import { section } from '../../views/format.js';
import { scrubStrings } from '../../poster/server-paths.js';
import { handleBankCommand } from './bank.js';
import { handleChartCommand } from './chart.js';
import { handleContinueCommand } from './continue.js';
import type { CommandContext } from './command-context.js';
import { handleDigestCommand } from './digest.js';
import { handleHelpCommand } from './help.js';
import { handleListCommand } from './list.js';
import { parseSlashCommand } from './parse-command.js';
import type { WorkQueue } from '../work-queue.js';
import { handleStartCommand } from './start.js';
import { handleStatusCommand } from './status.js';
import { handleStopCommand } from './stop.js';
import { handleTasksCommand } from './tasks.js';

export const SLASH_COMMAND = '/kernelseek';

/**
 * `/kernelseek …`: acknowledged at once (Slack gives 3 seconds), then parsed and handled; every
 * answer and every error goes back to the person alone, through the command's response_url.
 */
export function registerKernelseekCommand(app: App, deps: SlackDeps, heavy: WorkQueue): void {
  app.command(SLASH_COMMAND, async ({ command, ack, respond }) => {
    await ack();
    const parsed = parseSlashCommand(command.text ?? '');
    // Starting and stopping runs is the heavy work: it queues, so later acks are not held behind it.
    const task = () => handleCommand(parsed, command, respond, deps);
    if (parsed.ok && (parsed.command.kind === 'start' || parsed.command.kind === 'stop' || parsed.command.kind === 'continue')) return void heavy.run(task);
    await task();
  });
}

async function handleCommand(
  parsed: ReturnType<typeof parseSlashCommand>,
  command: SlashCommand,
  respond: RespondFn,
  deps: SlackDeps,
): Promise<void> {
  const reply = async (view: SlackView | string) => {
    const v = typeof view === 'string' ? { text: view, blocks: [section(view)] } : view;
    // Answers go through response_url, not the poster: the same guard against server paths applies.
    const out = guardSlackPayload(deps.scrub ? scrubStrings({ text: v.text, blocks: v.blocks }, deps.scrub) : v);
    await respond({ response_type: 'ephemeral', text: out.text, blocks: out.blocks });
  };
  const ctx: CommandContext = { deps, user: command.user_id, channel: command.channel_id, reply };
  try {
    if (!parsed.ok) return await reply(`:warning: ${parsed.error}`);
    const c = parsed.command;
    // Reads are authorised like writes: only `help` is for everyone.
    if (c.kind !== 'help') {
      const allowed = canUse(deps.slack, command.user_id, command.channel_id);
      if (!allowed.ok) return await reply(`:no_entry: ${allowed.reason}`);
    }
    switch (c.kind) {
      case 'start':
        return await handleStartCommand(ctx, c);
      case 'status':
        return await handleStatusCommand(ctx, c.runId);
      case 'stop':
        return await handleStopCommand(ctx, c.runId);
      case 'list':
        return await handleListCommand(ctx);
      case 'tasks':
        return await handleTasksCommand(ctx);
      case 'bank':
        return await handleBankCommand(ctx);
      case 'digest':
        return await handleDigestCommand(ctx, c.window);
      case 'continue':
        return await handleContinueCommand(ctx, c);
      case 'chart':
        return await handleChartCommand(ctx, c.runId);
      case 'help':
        return await handleHelpCommand(ctx);
    }
  } catch (error) {
    if (error instanceof AppError) return await reply(`:warning: ${error.userMessage}`).catch(() => {});
    deps.logger.error({ err: error, text: command.text, user: command.user_id }, '/kernelseek failed');
    await reply(':x: Something went wrong on our side; it has been logged. Try again in a minute.').catch(() => {});
  }
}
