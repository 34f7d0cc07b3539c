import type { Command } from 'commander';
import { formatProblem, loadTaskCatalog } from '../../harness/tasks.js';
import { configOf, writeLine, type CliContext } from '../context.js';
import { writeRows } from '../table.js';

export function registerTasks(program: Command, ctx: CliContext): void {
  program
    .command('tasks')
    .description('List the kernel tasks in kernels/ and report any task.yaml that is invalid')
    .option('--json', 'print a JSON array of tasks (problems go to stderr)')
    .action(async (opts: { json?: boolean }) => {
      const config = configOf(ctx);
      const catalog = await loadTaskCatalog(config.core.tasksDir);
      const rows = catalog.tasks.map(({ task, scenarios, quick, dir }) => ({
        name: task.name,
        summary: task.summary,
        device: task.device,
        architectures: task.architectures,
        kernel: task.kernel.file,
        entry: task.kernel.entry,
        scenarios: scenarios.length,
        quick: quick.length,
        peers: task.peers.map((p) => p.name),
        goal: task.goal,
        dir,
      }));
      writeRows(ctx.stdout, opts.json, rows, ['task', 'device', 'arch', 'scenarios', 'quick', 'peers', 'goal', 'summary'], (r) => [
        r.name,
        r.device,
        r.architectures.join(',') || '-',
        String(r.scenarios),
        String(r.quick),
        r.peers.join(',') || '-',
        `${r.goal.speedup}x ${r.goal.vs}`,
        r.summary,
      ]);
      if (catalog.problems.length > 0) {
        writeLine(ctx.stderr, `\n${catalog.problems.length} problem(s) in task files:`);
        for (const p of catalog.problems) writeLine(ctx.stderr, `  ${formatProblem(p)}`);
        ctx.exitCode = 1;
      }
    });
}
