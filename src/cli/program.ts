import { Command } from 'commander';
import { registerBank } from './commands/bank.js';
import { registerDigest } from './commands/digest.js';
import { registerEval } from './commands/eval.js';
import { registerGpuWorker } from './commands/gpu-worker.js';
import { registerMigrate } from './commands/migrate.js';
import { registerQueues } from './commands/queues.js';
import { registerServe } from './commands/serve.js';
import { registerRun } from './commands/run.js';
import { registerRuns } from './commands/runs.js';
import { registerTasks } from './commands/tasks.js';
import { registerTrace } from './commands/trace.js';
import type { CliContext } from './context.js';

export const VERSION = '0.1.0';

/** Builds the `kernelseek` command tree. Each command lives in its own file under commands/. */
export function createProgram(ctx: CliContext): Command {
  const program = new Command('kernelseek')
    .description('Make GPU kernels faster with a question-driven coding agent, from Slack or a terminal.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => ctx.stderr.write(s),
    })
    .exitOverride();
  registerMigrate(program, ctx);
  registerTasks(program, ctx);
  registerEval(program, ctx);
  registerGpuWorker(program, ctx);
  registerQueues(program, ctx);
  registerBank(program, ctx);
  registerServe(program, ctx);
  registerDigest(program, ctx);
  registerRun(program, ctx);
  registerRuns(program, ctx);
  registerTrace(program, ctx);
  return program;
}
