import type { Command } from 'commander';
import {
  composeReporters,
  createLocalAgent,
  createTerminalReporter,
  describeRun,
  listenForQuestions,
  noopReporter,
  type LocalAgent,
  holdRunLease,
  terminalLeaseOwner,
  type RunLease,
  type RunSummary,
  type RunView,
  type StartRunParams,
} from '../../agent/terminal.js';
import { parseDuration } from '../../config/index.js';
import { UserInputError } from '../../core/errors.js';
import { createStore, openDatabase } from '../../db/index.js';
import { configOf, loggerOf, writeLine, type CliContext } from '../context.js';

interface RunOpts {
  target?: string;
  budgetEvals?: string;
  budgetSteps?: string;
  budgetUsd?: string;
  budgetTime?: string;
  model?: string;
  arch?: string;
  questionTimeout: string;
  autonomous?: boolean;
  scenarios: string;
}

/** The CLI context, plus standard input for typed questions (tests pass a stream of their own). */
export type RunCommandContext = CliContext;

function positive(flag: string, value: string | undefined, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new UserInputError(`${flag} ${value}: give a ${integer ? 'whole number' : 'number'} greater than 0.`, { code: 'run_option' });
  }
  return n;
}

function duration(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const s = parseDuration(value);
  if (s === undefined || s <= 0) throw new UserInputError(`${flag} ${value}: give a duration such as 90s, 10m or 2h.`, { code: 'run_option' });
  return s;
}

export function parseRunOptions(task: string, opts: RunOpts, owner: string): StartRunParams {
  if (opts.scenarios !== 'quick' && opts.scenarios !== 'all') throw new UserInputError(`--scenarios ${opts.scenarios}: give quick or all.`, { code: 'run_option' });
  const budgets: NonNullable<StartRunParams['budgets']> = {};
  const evals = positive('--budget-evals', opts.budgetEvals, true);
  const steps = positive('--budget-steps', opts.budgetSteps, true);
  const usd = positive('--budget-usd', opts.budgetUsd, false);
  const seconds = duration('--budget-time', opts.budgetTime);
  if (evals !== undefined) budgets.evals = evals;
  if (steps !== undefined) budgets.steps = steps;
  if (usd !== undefined) budgets.usd = usd;
  if (seconds !== undefined) budgets.seconds = Math.ceil(seconds);
  const target = positive('--target', opts.target, false);
  return {
    task,
    owner,
    origin: 'terminal',
    budgets,
    questionTimeoutSeconds: duration('--question-timeout', opts.questionTimeout)!,
    autonomous: Boolean(opts.autonomous),
    scenarios: opts.scenarios,
    ...(target !== undefined ? { target } : {}),
    ...(opts.model ? { model: opts.model } : {}),
    ...(opts.arch ? { arch: opts.arch } : {}),
  };
}

export function registerRun(program: Command, ctx: RunCommandContext): void {
  program
    .command('run')
    .description('Run the agent on a task in this terminal (embedded database, in-process harness); questions are typed on standard input')
    .argument('[task]', 'task name (see `kernelseek tasks`); leave out with --resume')
    .option('--resume <run>', 'continue a run instead: after a crash (kill -9), Ctrl-C, convergence or a fixed model error')
    .option('--from <run>', "start a new run from that run's best kernel, with its history summarised (the task may be left out)")
    .option('--target <x>', "goal: geomean speedup over the task's goal reference (default: the task's goal)")
    .option('--budget-evals <n>', 'evaluations (default 50)')
    .option('--budget-steps <n>', 'model steps (default 200)')
    .option('--budget-usd <d>', 'dollars of model usage (default 25)')
    .option('--budget-time <t>', 'active wall time, e.g. 2h (default 4h)')
    .option('--model <id>', 'model id (default KERNELSEEK_MODEL)')
    .option('--arch <sm_xx>', "GPU architecture for cuda tasks (default the task's first)")
    .option('--question-timeout <t>', 'how long a decision point waits for your question before the bank asks', '60s')
    .option('--autonomous', 'the question bank answers every decision point at once')
    .option('--scenarios <set>', 'scenarios a candidate must pass: all or quick', 'all')
    .action(async (task: string | undefined, opts: RunOpts & { resume?: string; from?: string }) => {
      if (!task && !opts.resume && !opts.from) throw new UserInputError('Give a task to start (`kernelseek run <task>`) or a run to continue (`kernelseek run --resume <run>`).', { code: 'run_option' });
      if (task && opts.resume) throw new UserInputError(`Give either a task (${task}) or --resume ${opts.resume}, not both: a resumed run keeps its task and options.`, { code: 'run_option' });
      if (opts.from && opts.resume) throw new UserInputError('Give --from (a new run from that run\'s best) or --resume (the same run goes on), not both.', { code: 'run_option' });
      const owner = ctx.env.USER ?? ctx.env.LOGNAME ?? 'terminal';
      let params = task ? parseRunOptions(task, opts, owner) : null;
      const config = configOf(ctx);
      const logger = loggerOf(config, 'run');
      const handle = await openDatabase(config.db);
      let agent: LocalAgent | undefined;
      let lease: RunLease | undefined;
      let stopListening = () => {};
      try {
        await handle.migrate();
        const store = createStore(handle.db);
        if (opts.from) {
          // The new run optimises its parent's task; the parent is looked up here only to name it.
          const parent = await store.runs.get(opts.from);
          if (!parent) throw new UserInputError(`There is no run '${opts.from}' to start from; \`kernelseek runs\` lists them.`, { code: 'run_unknown' });
          params = { ...(params ?? parseRunOptions(parent.task, opts, owner)), continueFrom: parent.id };
        }
        let resolveFinished!: (summary: RunSummary) => void;
        const finished = new Promise<RunSummary>((r) => (resolveFinished = r));
        const reporter = composeReporters(createTerminalReporter(ctx.stdout, { live: ctx.interactive }), { ...noopReporter, runFinished: ({ summary }) => resolveFinished(summary) });
        agent = createLocalAgent({ config, store, logger, dispatcherEnv: ctx.env, reporter });
        const { engine, scheduler } = agent;
        const leaseOptions = { owner: terminalLeaseOwner(), seconds: config.agent.runs.leaseSeconds, logger };
        let run: RunView;
        if (params) {
          run = await engine.startRun(params);
          lease = await holdRunLease(store, run.id, leaseOptions);
          writeLine(ctx.stdout, `Run ${run.id} on ${run.task} with ${run.model}: target ${run.target}x, budgets ${run.evaluations.budget} evaluations / ${run.steps.budget} steps / $${run.costUsd.budget}.`);
          if (run.parentRunId) writeLine(ctx.stdout, `It continues ${run.parentRunId} from its best kernel, with its history summarised for the agent.`);
        } else {
          const id = opts.resume!;
          const stored = await store.runs.get(id);
          if (!stored) throw new UserInputError(`There is no run '${id}' in this database (${config.db.kind === 'pglite' ? config.db.dataDir : 'DATABASE_URL'}); \`kernelseek runs\` lists them.`, { code: 'run_unknown' });
          // Read before taking the lease: taking it ends the interruption it shows.
          const before = describeRun(stored);
          lease = await holdRunLease(store, id, leaseOptions);
          run = await engine.continueRun(id);
          writeLine(ctx.stdout, `Resuming run ${run.id} on ${run.task} (${before.interrupted ? 'interrupted: its process died' : before.status}${before.endReason ? `, ${before.endReason}` : ''}): ${run.evaluations.used}/${run.evaluations.budget} evaluations, ${run.steps.used}/${run.steps.budget} steps, $${run.costUsd.used.toFixed(4)} so far.`);
        }
        const autonomous = run.autonomous;
        writeLine(ctx.stdout, `Workspace: ${config.core.dataDir}/workspaces/${run.id}${autonomous ? '' : ' — type a question at any time; it reaches the agent at its next turn.'}`);
        if (!autonomous) {
          stopListening = listenForQuestions(ctx.stdin, engine, run.id, { author: owner, report: (t) => writeLine(ctx.stdout, `  (${t})`) });
        }
        const interrupted = new Promise<'interrupted'>((resolve) => {
          if (ctx.signal.aborted) resolve('interrupted');
          ctx.signal.addEventListener('abort', () => resolve('interrupted'), { once: true });
        });
        const outcome = await Promise.race([finished, interrupted]);
        if (outcome === 'interrupted') {
          writeLine(ctx.stdout, 'Interrupted: stopping the run (press Ctrl-C again to quit at once)...');
          // The summary (and where the best kernel is) is printed when the run has stopped; it says
          // how to continue it.
          await engine.stopRun(run.id, { by: 'Ctrl-C in the terminal', reason: 'interrupted' }).catch(() => undefined);
          await finished;
          ctx.exitCode = 130;
        } else {
          ctx.exitCode = outcome.status === 'failed' ? 1 : 0;
        }
        await scheduler.idle(run.id);
      } finally {
        stopListening();
        await agent?.close();
        await lease?.release().catch(() => undefined);
        await handle.close();
      }
    });
}
