import { Command } from 'commander';
import type { CliContext } from './context.js';

export const VERSION = '0.1.0';

type Register = (program: Command, ctx: CliContext) => void;

/**
 * Every command, in the order `--help` lists them. A command's module (and so Bolt, BullMQ, Vega,
 * the Anthropic SDK or PGlite behind it) is imported only when that command is the one run; the
 * others appear as a name, their arguments and a summary. To add a command: one row here. `args`
 * and `summary` repeat what the module declares (test/cli/program.test.ts checks they agree).
 */
export const COMMANDS: readonly { name: string; args: string; summary: string; load: () => Promise<Register> }[] = [
  { name: 'migrate', args: '', summary: 'Apply database migrations (PostgreSQL from DATABASE_URL, else the embedded database)', load: async () => (await import('./commands/migrate.js')).registerMigrate },
  { name: 'tasks', args: '[dir]', summary: 'List the kernel tasks in kernels/ and report any task.yaml that is invalid', load: async () => (await import('./commands/tasks.js')).registerTasks },
  { name: 'task', args: '', summary: 'Make a new task: `task init` writes a task folder from your kernel and a reference, then checks and evaluates it', load: async () => (await import('./commands/task-init.js')).registerTask },
  { name: 'eval', args: '<task> <kernel>', summary: 'Evaluate one kernel file against a task with the harness (correctness on every scenario, timing vs baseline and peers)', load: async () => (await import('./commands/eval.js')).registerEval },
  { name: 'gpu-worker', args: '', summary: 'Take evaluation and gpu_bash jobs from Redis and run them on this host, one job per GPU at a time', load: async () => (await import('./commands/gpu-worker.js')).registerGpuWorker },
  { name: 'queues', args: '', summary: 'Show waiting, active, delayed, failed and completed jobs per queue, and the GPU workers attached', load: async () => (await import('./commands/queues.js')).registerQueues },
  { name: 'bank', args: '', summary: 'List the question bank with how often each question was asked and the gain that followed', load: async () => (await import('./commands/bank.js')).registerBank },
  { name: 'serve', args: '', summary: 'Run the Slack app, the agent workers and the digest scheduler (split them across machines with --role)', load: async () => (await import('./commands/serve.js')).registerServe },
  { name: 'digest', args: '', summary: 'Show the digest of recent activity (runs, best speedups, cost, questions), or post it to Slack now', load: async () => (await import('./commands/digest.js')).registerDigest },
  { name: 'run', args: '[task]', summary: 'Run the agent on a task in this terminal (embedded database, in-process harness); questions are typed on standard input', load: async () => (await import('./commands/run.js')).registerRun },
  { name: 'runs', args: '', summary: 'List recent runs: task, status (interrupted: its process died), best, evaluations, cost, owner, where it runs', load: async () => (await import('./commands/runs.js')).registerRuns },
  { name: 'show', args: '<run> [eval]', summary: "Show a run (its counted best, every evaluation's headline) or one evaluation's whole result as the model saw it, with the per-scenario table", load: async () => (await import('./commands/show.js')).registerShow },
  { name: 'export', args: '<run>', summary: "Export a run's result: the kernel, its diff against the task's baseline, and the evidence (JSON, Markdown, chart)", load: async () => (await import('./commands/export.js')).registerExport },
  { name: 'pr', args: '<run>', summary: "Open a pull request with a run's verified result on the team's repository: a new branch, the kernel, the evidence as its body", load: async () => (await import('./commands/pr.js')).registerPr },
  { name: 'doctor', args: '', summary: "Check this host for a role: every setting, the store, Redis, Slack, the model key, the GPU, CUDA, Python and the sandbox, each ok / warn / fail with its fix", load: async () => (await import('./commands/doctor.js')).registerDoctor },
  { name: 'chart', args: '<run>', summary: "Draw a run's chart: speedup per evaluation with its interval, the best so far, the baseline's, peers' and goal's lines (PNG)", load: async () => (await import('./commands/chart.js')).registerChart },
  { name: 'trace', args: '<run>', summary: "Export a run's whole trace (run, messages, model steps, tool calls, evaluations, questions) as JSON lines, secrets redacted", load: async () => (await import('./commands/trace.js')).registerTrace },
];

/**
 * The command a command line runs: its first word that is not an option (`help eval` asks about
 * `eval`). Sound because `kernelseek` itself has no option that takes a value (-h, -V only).
 */
export function invokedCommand(argv: readonly string[]): string | undefined {
  const words = argv.filter((a) => !a.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

/** Builds the `kernelseek` command tree: the invoked command in full, the others as entries of the help. */
export async function createProgram(ctx: CliContext, argv: readonly string[] = []): Promise<Command> {
  const program = new Command('kernelseek')
    .description('Make GPU kernels faster with a question-driven coding agent, from Slack or a terminal.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => ctx.stderr.write(s),
    })
    .exitOverride();
  const wanted = invokedCommand(argv);
  for (const entry of COMMANDS) {
    if (entry.name === wanted) {
      (await entry.load())(program, ctx);
    } else {
      const stub = program.command(entry.name).description(entry.summary);
      for (const arg of entry.args.split(' ').filter(Boolean)) stub.argument(arg);
    }
  }
  return program;
}
