import { renderTaskList } from '../../views/lists.js';
import type { CommandContext } from './command-context.js';

/** `/kernelseek tasks`: what can be optimised here. */
export async function handleTasksCommand(ctx: CommandContext): Promise<void> {
  const catalog = await ctx.deps.loadTasks();
  await ctx.reply(
    renderTaskList(
      catalog.tasks.map(({ task, scenarios }) => ({
        name: task.name,
        summary: task.summary,
        device: task.device,
        architectures: task.architectures,
        scenarios: scenarios.length,
        peers: task.peers.map((p) => p.name),
        goal: `${task.goal.speedup}x ${task.goal.vs.replace('_', ' ')}`,
      })),
      catalog.problems.map((p) => p.message),
    ),
  );
}
