import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { UserInputError } from '../../core/errors.js';
import { createStore, openDatabase } from '../../db/index.js';
import { buildRunChartSpec, describeRunChart, loadRunChartInput, renderRunChart } from '../../digest/index.js';
import { loadTaskCatalog } from '../../harness/tasks.js';
import { configOf, writeLine, type CliContext } from '../context.js';

interface ChartOptions {
  out?: string;
  spec?: boolean;
}

export function registerChart(program: Command, ctx: CliContext): void {
  program
    .command('chart')
    .description("Draw a run's chart: speedup per evaluation with its interval, the best so far, the baseline's, peers' and goal's lines (PNG)")
    .argument('<run>', 'run id, e.g. ks-7f3a2c9d')
    .option('--out <file>', 'where to write the PNG (default: <run>-chart.png here)')
    .option('--spec', 'print the Vega-Lite specification (the plotted data) instead of drawing')
    .action(async (runId: string, opts: ChartOptions) => {
      const config = configOf(ctx);
      const handle = await openDatabase(config.db);
      try {
        await handle.migrate();
        const store = createStore(handle.db);
        const catalog = await loadTaskCatalog(config.core.tasksDir).catch(() => undefined);
        const input = await loadRunChartInput(store, runId, (task) => catalog?.tasks.find((t) => t.task.name === task)?.task.goal);
        if (!input) throw new UserInputError(`There is no run '${runId}'. \`kernelseek runs\` lists the runs.`, { code: 'run_unknown' });
        if (opts.spec) {
          writeLine(ctx.stdout, JSON.stringify(buildRunChartSpec(input), null, 2));
          return;
        }
        const file = path.resolve(ctx.cwd, opts.out ?? `${input.runId}-chart.png`);
        await writeFile(file, await renderRunChart(input));
        writeLine(ctx.stdout, `${describeRunChart(input)}`);
        writeLine(ctx.stderr, `Chart written to ${file}.`);
      } finally {
        await handle.close();
      }
    });
}
