import path from 'node:path';
import type { Command } from 'commander';
import { formatProblem, loadTaskCatalog } from '../../harness/tasks.js';
import { formatCheckProblem } from '../../harness/task-check.js';
import { checkTasksAt } from '../../harness/task-gate.js';
import { configOf, writeLine, type CliContext } from '../context.js';
import { writeRows } from '../table.js';

/** `tasks --check [dir]`: every problem of every task at once, each with its fix; exit 1 on an error. */
async function runCheck(ctx: CliContext, dir: string | undefined, opts: { json?: boolean; harness: boolean }): Promise<void> {
  const config = configOf(ctx);
  const target = dir ? path.resolve(ctx.cwd, dir) : config.core.tasksDir;
  const { checks, notes } = await checkTasksAt(target, { config, env: ctx.env, harness: opts.harness });
  const errors = checks.reduce((n, c) => n + c.problems.filter((p) => p.severity === 'error').length, 0);
  const warnings = checks.reduce((n, c) => n + c.problems.filter((p) => p.severity === 'warning').length, 0);
  ctx.exitCode = errors > 0 || checks.length === 0 ? 1 : 0;
  if (opts.json) {
    const tasks = checks.map((c) => ({ name: c.name, dir: c.dir, ok: !c.problems.some((p) => p.severity === 'error'), problems: c.problems, notes: c.notes }));
    writeLine(ctx.stdout, JSON.stringify({ tasks, problems: checks.flatMap((c) => c.problems.map((p) => ({ task: c.name, ...p }))), notes }, null, 1));
    return;
  }
  if (checks.length === 0) {
    writeLine(ctx.stderr, `No task found at ${target}: give a task folder (with task.yaml) or a folder of tasks.`);
    return;
  }
  for (const c of checks) {
    const e = c.problems.filter((p) => p.severity === 'error').length;
    const w = c.problems.length - e;
    writeLine(ctx.stdout, `${e > 0 ? '✗' : '✓'} ${c.name}${c.problems.length === 0 ? ': ok' : `: ${e} error${e === 1 ? '' : 's'}${w ? `, ${w} warning${w === 1 ? '' : 's'}` : ''}`}`);
    for (const p of c.problems) writeLine(ctx.stdout, `  ${formatCheckProblem(p).replace(/\n/g, '\n  ')}`);
    for (const n of c.notes) writeLine(ctx.stdout, `  note: ${n}`);
  }
  for (const n of notes) writeLine(ctx.stdout, `note: ${n}`);
  writeLine(ctx.stdout, `\n${checks.length} task${checks.length === 1 ? '' : 's'} checked: ${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}.`);
}

export function registerTasks(program: Command, ctx: CliContext): void {
  program
    .command('tasks')
    .description('List the kernel tasks in kernels/ and report any task.yaml that is invalid')
    .argument('[dir]', 'with --check: a task folder, or a folder of tasks (default: the tasks folder)')
    .option('--json', 'print a JSON array of tasks (problems go to stderr); with --check, the problems as JSON')
    .option('--check', 'check each task strictly: task.yaml, reference.py, the baseline against the signature, tolerance, goal; every problem with its fix')
    .option('--no-harness', "with --check: skip the harness's own check (it imports reference.py and runs it on a scenario)")
    .action(async (dir: string | undefined, opts: { json?: boolean; check?: boolean; harness: boolean }) => {
      if (opts.check) return runCheck(ctx, dir, opts);
      if (dir !== undefined) {
        writeLine(ctx.stderr, `error: a folder (${dir}) is taken only with --check: \`kernelseek tasks --check ${dir}\``);
        ctx.exitCode = 2;
        return;
      }
      const config = configOf(ctx);
      const catalog = await loadTaskCatalog(config.core.tasksDir);
      const rows = catalog.tasks.map(({ task, layout, scenarios, quick, dir: taskDir }) => ({
        name: task.name,
        summary: task.summary,
        device: task.device,
        architectures: task.architectures,
        kernel: task.kernel.file,
        language: layout.language,
        entry: task.kernel.entry,
        scenarios: scenarios.length,
        quick: quick.length,
        peers: task.peers.map((p) => p.name),
        goal: task.goal,
        dir: taskDir,
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
        writeLine(ctx.stderr, '`kernelseek tasks --check` shows every problem with its fix.');
        ctx.exitCode = 1;
      }
    });
}
