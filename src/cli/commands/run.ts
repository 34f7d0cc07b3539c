import type { Command } from 'commander';
import type { LocalAgent, RunLease, RunReporter, RunSettings, RunSummary, RunView, StartRunParams } from '../../agent/terminal.js';
import { parseDuration } from '../../config/index.js';
import { UserInputError } from '../../core/errors.js';
import { configOf, loggerOf, writeLine, type CliContext } from '../context.js';
import { startSpinner } from '../spinner.js';

interface RunOpts {
  target?: string;
  budgetEvals?: string;
  budgetSteps?: string;
  budgetUsd?: string;
  budgetTime?: string;
  model?: string;
  arch?: string;
  questionTimeout?: string;
  autonomous?: boolean;
  scenarios?: string;
  verbose?: boolean;
}

const DEFAULT_QUESTION_TIMEOUT = '60s';

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

/** The settings given on the command line, and only those (a resumed run keeps the others). */
export function parseRunSettings(opts: RunOpts): RunSettings & { budgets: NonNullable<RunSettings['budgets']> } {
  if (opts.scenarios !== undefined && opts.scenarios !== 'quick' && opts.scenarios !== 'all') throw new UserInputError(`--scenarios ${opts.scenarios}: give quick or all.`, { code: 'run_option' });
  const budgets: NonNullable<RunSettings['budgets']> = {};
  const evals = positive('--budget-evals', opts.budgetEvals, true);
  const steps = positive('--budget-steps', opts.budgetSteps, true);
  const usd = positive('--budget-usd', opts.budgetUsd, false);
  const seconds = duration('--budget-time', opts.budgetTime);
  if (evals !== undefined) budgets.evals = evals;
  if (steps !== undefined) budgets.steps = steps;
  if (usd !== undefined) budgets.usd = usd;
  if (seconds !== undefined) budgets.seconds = Math.ceil(seconds);
  const target = positive('--target', opts.target, false);
  const timeout = duration('--question-timeout', opts.questionTimeout);
  return {
    budgets,
    ...(opts.autonomous !== undefined ? { autonomous: opts.autonomous } : {}),
    ...(opts.scenarios !== undefined ? { scenarios: opts.scenarios as 'quick' | 'all' } : {}),
    ...(target !== undefined ? { target } : {}),
    ...(timeout !== undefined ? { questionTimeoutSeconds: timeout } : {}),
    ...(opts.model ? { model: opts.model } : {}),
  };
}

export function parseRunOptions(task: string, opts: RunOpts, owner: string): StartRunParams {
  const given = parseRunSettings(opts);
  return {
    task,
    owner,
    origin: 'terminal',
    budgets: given.budgets,
    questionTimeoutSeconds: given.questionTimeoutSeconds ?? duration('--question-timeout', DEFAULT_QUESTION_TIMEOUT)!,
    autonomous: given.autonomous ?? false,
    scenarios: given.scenarios ?? 'all',
    ...(given.target !== undefined ? { target: given.target } : {}),
    ...(given.model ? { model: given.model } : {}),
    ...(opts.arch ? { arch: opts.arch } : {}),
  };
}

/** A reporter whose events wait until `open()` (then are replayed in order), and pass straight through after. */
function holdUntilOpen(target: RunReporter): { reporter: RunReporter; open(): Promise<void> } {
  let queue: [keyof RunReporter, unknown][] | null = [];
  const send = async (key: keyof RunReporter, event: unknown) => (target[key] as ((e: unknown) => unknown) | undefined)?.call(target, event);
  const reporter = {} as Record<keyof RunReporter, (event: unknown) => unknown>;
  for (const key of Object.keys(target) as (keyof RunReporter)[]) {
    if (typeof target[key] !== 'function') continue;
    reporter[key] = (event) => (queue ? void queue.push([key, event]) : send(key, event));
  }
  return {
    reporter: reporter as unknown as RunReporter,
    async open() {
      const pending = queue ?? [];
      queue = null;
      for (const [key, event] of pending) await send(key, event);
    },
  };
}

const fmtSeconds = (s: number) => (s % 3600 === 0 ? `${s / 3600}h` : s % 60 === 0 ? `${s / 60}m` : `${s}s`);

/**
 * The settings a resumed run goes on with, each marked as given now or kept from the run: the first
 * lines of `run --resume` say them, so nobody wonders whether --autonomous or a budget took.
 */
export function settingsLines(run: RunView, given: RunSettings, scenarios: string): string[] {
  const mark = (isGiven: boolean) => (isGiven ? ' (given now)' : ' (kept)');
  const b = given.budgets ?? {};
  return [
    `Settings: ${run.autonomous ? 'autonomous: the bank answers every decision point' : `a decision point waits ${run.questionTimeoutSeconds}s for your question`}${mark(given.autonomous !== undefined || given.questionTimeoutSeconds !== undefined)}; model ${run.model}${mark(given.model !== undefined)}; scenarios ${scenarios}${mark(given.scenarios !== undefined)}; target ${run.target}x${mark(given.target !== undefined)}.`,
    `Budgets: ${run.evaluations.budget} evaluations${mark(b.evals !== undefined)}, ${run.steps.budget} steps${mark(b.steps !== undefined)}, $${run.costUsd.budget}${mark(b.usd !== undefined)}, ${fmtSeconds(run.elapsedSeconds.budget)} active${mark(b.seconds !== undefined)}.`,
  ];
}

export function registerRun(program: Command, ctx: RunCommandContext): void {
  program
    .command('run')
    .description('Run the agent on a task in this terminal (embedded database, in-process harness); questions are typed on standard input')
    .argument('[task]', 'task name (see `kernelseek tasks`); leave out with --resume')
    .option('--resume <run>', 'continue a run instead (after a crash, Ctrl-C, convergence or a fixed model error), with its settings unless you give new ones')
    .option('--from <run>', "start a new run from that run's best kernel, with its history summarised (the task may be left out)")
    .option('--target <x>', "goal: geomean speedup over the task's goal reference (default: the task's goal)")
    .option('--budget-evals <n>', 'evaluations (default 50)')
    .option('--budget-steps <n>', 'model steps (default 200)')
    .option('--budget-usd <d>', 'dollars of model usage (default 25)')
    .option('--budget-time <t>', 'active wall time, e.g. 2h (default 4h)')
    .option('--model <id>', 'model id (default KERNELSEEK_MODEL)')
    .option('--arch <sm_xx>', "GPU architecture for cuda tasks (default the task's first)")
    .option('--question-timeout <t>', `how long a decision point waits for your question before the bank asks (default ${DEFAULT_QUESTION_TIMEOUT})`)
    .option('--autonomous', 'the question bank answers every decision point at once')
    .option('--no-autonomous', 'with --resume: wait for your questions again')
    .option('--scenarios <set>', 'scenarios a candidate must pass: all (default) or quick')
    .option('--verbose', "print each evaluation's whole result: intervals, verdicts, the per-scenario table")
    .action(async (task: string | undefined, opts: RunOpts & { resume?: string; from?: string }) => {
      if (!task && !opts.resume && !opts.from) throw new UserInputError('Give a task to start (`kernelseek run <task>`) or a run to continue (`kernelseek run --resume <run>`).', { code: 'run_option' });
      if (task && opts.resume) throw new UserInputError(`Give either a task (${task}) or --resume ${opts.resume}, not both: a resumed run keeps its task.`, { code: 'run_option' });
      if (opts.from && opts.resume) throw new UserInputError('Give --from (a new run from that run\'s best) or --resume (the same run goes on), not both.', { code: 'run_option' });
      if (opts.resume && opts.arch) throw new UserInputError(`--arch: a resumed run keeps its architecture; start a new run from its best with --from ${opts.resume} --arch ${opts.arch}.`, { code: 'run_option' });
      const owner = ctx.env.USER ?? ctx.env.LOGNAME ?? 'terminal';
      let params = task ? parseRunOptions(task, opts, owner) : null;
      const given = parseRunSettings(opts);
      const config = configOf(ctx);
      // The first line comes before anything slow (the database, the engine's modules), so a person
      // sees at once that it started; the spinner after it keeps the terminal moving.
      writeLine(ctx.stdout, opts.resume ? `Resuming run ${opts.resume}…` : `Starting a run of ${task ?? `the task of ${opts.from}`}…`);
      const spinner = startSpinner(ctx.stdout, config.db.kind === 'pglite' ? 'opening the embedded database' : 'connecting to the database', { live: ctx.interactive });
      const [{ composeReporters, createLocalAgent, createTerminalReporter, describeRun, holdRunLease, listenForQuestions, noopReporter, terminalLeaseOwner }, { createStore, openDatabase, migrateIfNeeded }] = await Promise.all([
        import('../../agent/terminal.js'),
        import('../../db/index.js'),
      ]);
      const logger = loggerOf(config, 'run');
      let handle: Awaited<ReturnType<typeof openDatabase>> | undefined;
      let agent: LocalAgent | undefined;
      let lease: RunLease | undefined;
      let terminal: ReturnType<typeof createTerminalReporter> | undefined;
      let stopListening = () => {};
      let held: ReturnType<typeof holdUntilOpen> | undefined;
      try {
        handle = await openDatabase(config.db);
        await migrateIfNeeded(handle);
        spinner.stop();
        const store = createStore(handle.db);
        if (opts.from) {
          // The new run optimises its parent's task; the parent is looked up here only to name it.
          const parent = await store.runs.get(opts.from);
          if (!parent) throw new UserInputError(`There is no run '${opts.from}' to start from; \`kernelseek runs\` lists them.`, { code: 'run_unknown' });
          params = { ...(params ?? parseRunOptions(parent.task, opts, owner)), continueFrom: parent.id };
        }
        let resolveFinished!: (summary: RunSummary) => void;
        const finished = new Promise<RunSummary>((r) => (resolveFinished = r));
        terminal = createTerminalReporter(ctx.stdout, { live: ctx.interactive, verbose: Boolean(opts.verbose) });
        // The run's first lines (its id, its settings) come before what it reports while it starts.
        held = holdUntilOpen(terminal);
        const reporter = composeReporters(held.reporter, { ...noopReporter, runFinished: ({ summary }) => resolveFinished(summary) });
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
          run = await engine.continueRun(id, given);
          writeLine(ctx.stdout, `Resuming run ${run.id} on ${run.task} (${before.interrupted ? 'interrupted: its process died' : before.status}${before.endReason ? `, ${before.endReason}` : ''}): ${run.evaluations.used}/${run.evaluations.budget} evaluations, ${run.steps.used}/${run.steps.budget} steps, $${run.costUsd.used.toFixed(4)} so far.`);
          const scenarios = ((await store.runs.get(id))?.state as { scenarios?: string } | null)?.scenarios ?? 'all';
          for (const l of settingsLines(run, given, scenarios)) writeLine(ctx.stdout, l);
        }
        const autonomous = run.autonomous;
        writeLine(ctx.stdout, `Workspace: ${config.core.dataDir}/workspaces/${run.id}${autonomous ? '' : ' — type a question at any time; it reaches the agent at its next turn.'}`);
        await held.open();
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
      } catch (error) {
        await held?.open();
        throw error;
      } finally {
        spinner.stop();
        terminal?.close();
        stopListening();
        await agent?.close();
        await lease?.release().catch(() => undefined);
        await handle?.close();
      }
    });
}
