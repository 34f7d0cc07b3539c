import { AppError } from '../../../core/errors.js';
import { canStart } from '../../auth.js';
import { renderStartFailedCard, renderStartingCard, renderStatusCard } from '../../views/status-card.js';
import type { CommandContext } from './command-context.js';
import { closest, type StartOptions } from './parse-command.js';

/** What Slack's refusal to post in a channel means for the person, and what to do about it. */
function explainPostFailure(error: string): string {
  switch (error) {
    case 'not_in_channel':
      return 'I am not a member of this channel. Invite me with `/invite @KernelSeek`, then start the run again.';
    case 'channel_not_found':
      return 'I cannot see this channel (a private channel or a direct message I am not in). Invite me with `/invite @KernelSeek`, or start the run in a channel I am in.';
    case 'is_archived':
      return 'This channel is archived; start the run in another channel.';
    default:
      return `Slack would not let me post the run's thread here (\`${error}\`). Try again, or start it in another channel.`;
  }
}

/**
 * `/kernelseek start <task> …`: check who and where, check the task and its architecture, open the
 * run's thread (its root is the status card), then create the run bound to that thread.
 */
export async function handleStartCommand(ctx: CommandContext, command: { task: string; options: StartOptions }): Promise<void> {
  const { deps, user, channel } = ctx;
  const allowed = canStart(deps.slack, user, channel);
  if (!allowed.ok) return ctx.reply(`:no_entry: ${allowed.reason}`);

  const catalog = await deps.loadTasks();
  const loaded = catalog.tasks.find((t) => t.task.name === command.task);
  if (!loaded) {
    const names = catalog.tasks.map((t) => t.task.name);
    const broken = catalog.problems.some((p) => p.file.includes(`/${command.task}/`));
    if (broken) return ctx.reply(`:warning: Task \`${command.task}\` exists but its task.yaml is invalid; \`kernelseek tasks --check\` on the server shows every problem with its fix.`);
    const guess = closest(command.task, names);
    const hint = guess ? ` Did you mean \`${guess}\`?` : '';
    return ctx.reply(`:warning: Unknown task \`${command.task}\`.${hint} Tasks: ${names.map((n) => `\`${n}\``).join(', ') || 'none installed'}.`);
  }
  const { task } = loaded;
  const { options } = command;
  if (options.arch) {
    if (task.device === 'cpu') return ctx.reply(`:warning: \`${task.name}\` runs on the CPU; remove \`arch=${options.arch}\`.`);
    if (!task.architectures.includes(options.arch)) {
      return ctx.reply(`:warning: \`${task.name}\` supports ${task.architectures.map((a) => `\`arch=${a}\``).join(', ')}, not \`arch=${options.arch}\`.`);
    }
  }

  const starting = renderStartingCard(task.name, user);
  const root = await deps.poster.postMessage({ channel, text: starting.text, blocks: starting.blocks });
  if (!root.ok || !root.ts) return ctx.reply(`:warning: ${explainPostFailure(root.ok ? 'no_ts' : root.error)}`);
  const threadTs = root.ts;

  try {
    const run = await deps.control.startRun({
      task: task.name,
      owner: user,
      origin: 'slack',
      slack: { channel, threadTs },
      ...(options.target !== undefined ? { target: options.target } : {}),
      ...(options.budget !== undefined ? { budgets: { evals: options.budget } } : {}),
      ...(options.model ? { model: options.model } : {}),
      ...(options.arch ? { arch: options.arch } : {}),
      ...(options.timeoutSeconds !== undefined ? { questionTimeoutSeconds: options.timeoutSeconds } : {}),
      autonomous: options.auto,
    });
    const card = renderStatusCard(run);
    void deps.poster.updateMessage({ channel, ts: threadTs, text: card.text, blocks: card.blocks });
  } catch (error) {
    const reason = error instanceof AppError ? error.userMessage : 'an internal error (logged)';
    if (!(error instanceof AppError)) deps.logger.error({ err: error, task: task.name, user }, 'starting a run failed');
    const failed = renderStartFailedCard(task.name, user, reason);
    void deps.poster.updateMessage({ channel, ts: threadTs, text: failed.text, blocks: failed.blocks });
    await ctx.reply(`:warning: Could not start the run: ${reason}`);
  }
}
