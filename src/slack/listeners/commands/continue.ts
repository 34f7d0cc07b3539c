import { AppError } from '../../../core/errors.js';
import type { RunView } from '../../agent-port.js';
import { canStart } from '../../auth.js';
import type { SlackDeps } from '../../deps.js';
import { fmtSpeedup, section, who } from '../../views/format.js';
import { runLink } from '../../views/links.js';
import { renderStartFailedCard, renderStartingCard, renderStatusCard } from '../../views/status-card.js';
import type { CommandContext } from './command-context.js';
import type { StartOptions } from './parse-command.js';
import { getVisibleRun } from './visible-run.js';

export interface ContinueRequest {
  /** The run to continue from (its best kernel). */
  parent: RunView;
  /** Where the new run's thread goes. */
  channel: string;
  user: string;
  fork: boolean;
  options: StartOptions;
}

/**
 * Starts a run that continues `parent` from its best kernel (`/kernelseek continue`, `fork`, the
 * final card's *Continue from best*): a new thread in `channel`, linked both ways — the new thread
 * says what it continues, the parent's thread where it was continued. Returns the new run, or a
 * sentence for the person when it could not start.
 */
export async function startContinuation(deps: SlackDeps, request: ContinueRequest): Promise<{ ok: true; run: RunView } | { ok: false; reason: string }> {
  const { parent, channel, user, options } = request;
  const allowed = canStart(deps.slack, user, channel);
  if (!allowed.ok) return { ok: false, reason: `:no_entry: ${allowed.reason}` };
  // A quick run's best on its subset is a kernel to continue from too (said so below).
  if (!parent.best && !parent.quickBest) return { ok: false, reason: `:warning: \`${parent.id}\` has no correct kernel to continue from. Start a new run with \`/kernelseek start ${parent.task}\`.` };
  if (options.arch) {
    const loaded = (await deps.loadTasks()).tasks.find((t) => t.task.name === parent.task);
    if (loaded && loaded.task.device === 'cpu') return { ok: false, reason: `:warning: \`${parent.task}\` runs on the CPU; remove the GPU (\`--arch ${options.arch}\`).` };
    if (loaded && !loaded.task.architectures.includes(options.arch)) {
      return { ok: false, reason: `:warning: \`${parent.task}\` supports ${loaded.task.architectures.map((a) => `\`${a}\``).join(', ')}, not \`${options.arch}\`.` };
    }
  }

  const starting = renderStartingCard(parent.task, user);
  const root = await deps.poster.postMessage({ channel, text: starting.text, blocks: starting.blocks });
  if (!root.ok || !root.ts) return { ok: false, reason: `:warning: Slack would not let me post the new run's thread here (\`${root.ok ? 'no_ts' : root.error}\`). Invite me with \`/invite @KernelSeek\`, then try again.` };
  const threadTs = root.ts;
  let run: RunView;
  try {
    run = await deps.control.startRun({
      task: parent.task,
      owner: user,
      origin: 'slack',
      slack: { channel, threadTs },
      continueFrom: parent.id,
      ...(options.target !== undefined ? { target: options.target } : {}),
      ...(options.budget !== undefined ? { budgets: { evals: options.budget } } : {}),
      model: options.model ?? parent.model,
      ...((options.arch ?? parent.arch) ? { arch: (options.arch ?? parent.arch)! } : {}),
      ...(options.timeoutSeconds !== undefined ? { questionTimeoutSeconds: options.timeoutSeconds } : {}),
      autonomous: options.auto,
    });
  } catch (error) {
    const reason = error instanceof AppError ? error.userMessage : 'an internal error (logged)';
    if (!(error instanceof AppError)) deps.logger.error({ err: error, parent: parent.id, user }, 'continuing a run failed');
    const failed = renderStartFailedCard(parent.task, user, reason);
    void deps.poster.updateMessage({ channel, ts: threadTs, text: failed.text, blocks: failed.blocks });
    return { ok: false, reason: `:warning: Could not continue \`${parent.id}\`: ${reason}` };
  }
  const card = renderStatusCard(run);
  void deps.poster.updateMessage({ channel, ts: threadTs, text: card.text, blocks: card.blocks });

  // Linked both ways: each thread names the other.
  const [parentLink, childLink] = await Promise.all([runLink(deps.directory, parent), runLink(deps.directory, run)]);
  const what = request.fork ? 'Forks' : 'Continues';
  const changed = [
    options.target !== undefined ? `goal ${fmtSpeedup(options.target)}` : '',
    options.arch && options.arch !== parent.arch ? `on ${options.arch}` : '',
  ].filter(Boolean);
  const fromBest = parent.best ?? parent.quickBest!;
  const from = `from its best kernel (${fmtSpeedup(fromBest.speedupVsBaseline)} vs baseline${parent.best ? '' : ' on the quick subset, not counted'}), with its history summarised for the agent`;
  const down = `:link: ${what} ${parentLink} ${from}${changed.length ? `; ${changed.join(', ')}` : ''}. Started by ${who(user)}.`;
  void deps.poster.postMessage({ channel, threadTs, text: down, blocks: [section(down)] });
  if (parent.slack) {
    const up = `:arrow_right: ${who(user)} ${request.fork ? 'forked' : 'continued'} this run as ${childLink}${changed.length ? ` (${changed.join(', ')})` : ''}, from its best kernel.`;
    void deps.poster.postMessage({ channel: parent.slack.channel, threadTs: parent.slack.threadTs, text: up, blocks: [section(up)] });
  }
  return { ok: true, run };
}

/** `/kernelseek continue <run>` and `/kernelseek fork <run> --goal …`: a new run in this channel from the run's best kernel. */
export async function handleContinueCommand(ctx: CommandContext, command: { runId: string; fork: boolean; options: StartOptions }): Promise<void> {
  const parent = await getVisibleRun(ctx, command.runId);
  const started = await startContinuation(ctx.deps, { parent, channel: ctx.channel, user: ctx.user, fork: command.fork, options: command.options });
  if (!started.ok) return ctx.reply(started.reason);
  const link = await runLink(ctx.deps.directory, started.run);
  await ctx.reply(`:rocket: Started ${link}, ${command.fork ? 'forking' : 'continuing'} \`${command.runId}\` from its best kernel.`);
}
