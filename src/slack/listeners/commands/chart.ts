import { describeRunChart, loadRunChartInput, renderRunChart } from '../../../digest/index.js';
import type { SlackDeps } from '../../deps.js';
import { who } from '../../views/format.js';
import { runLink } from '../../views/links.js';
import type { CommandContext } from './command-context.js';
import { getVisibleRun } from './visible-run.js';

/** Each task's goal, from the task catalog (for the chart's goal line). */
export async function goalsOf(deps: Pick<SlackDeps, 'loadTasks'>): Promise<(task: string) => { vs: 'best_peer' | 'baseline'; speedup: number } | undefined> {
  const catalog = await deps.loadTasks().catch(() => undefined);
  return (task) => catalog?.tasks.find((t) => t.task.name === task)?.task.goal;
}

/**
 * `/kernelseek chart <run>`: the run's chart (speedup per evaluation with intervals, the best so
 * far, the baseline's, peers' and goal's lines) posted in the run's thread, where its readers are;
 * the asker gets a link to it.
 */
export async function handleChartCommand(ctx: CommandContext, runId: string): Promise<void> {
  const { deps } = ctx;
  const view = await getVisibleRun(ctx, runId);
  const input = await loadRunChartInput(deps.store, view.id, await goalsOf(deps));
  if (!input) return ctx.reply(`There is no run '${runId}' in this channel.`);
  const png = await renderRunChart(input);
  const where = view.slack ?? { channel: ctx.channel, threadTs: undefined };
  const posted = await deps.poster.uploadFile({
    channel: where.channel,
    ...(where.threadTs ? { threadTs: where.threadTs } : {}),
    filename: `${view.id}-chart.png`,
    content: png,
    title: `Speedup over evaluations, ${view.id}`,
    initialComment: `:chart_with_upwards_trend: Chart of ${view.id}, for ${who(ctx.user)}. ${describeRunChart(input)}`,
  });
  if (!posted.ok) return ctx.reply(`:warning: Slack would not take the chart (\`${posted.error}\`).`);
  await ctx.reply(`:chart_with_upwards_trend: Posted the chart of ${await runLink(deps.directory, view)}${view.slack ? ' in its thread' : ' here'}. ${describeRunChart(input)}`);
}
