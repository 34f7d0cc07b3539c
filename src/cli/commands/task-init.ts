import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import type { Config } from '../../config/index.js';
import { AppError, UserInputError } from '../../core/errors.js';
import { recordBaselineFigures } from '../../harness/baseline-figures.js';
import { readCandidate } from '../../harness/candidate.js';
import { OP_NAMES } from '../../harness/init/ops.js';
import { planTask, writeTaskFolder, type InitInput } from '../../harness/init/plan.js';
import { failureLines, scenarioRows, SCENARIO_HEADERS } from '../../harness/result-view.js';
import { formatCheckProblem } from '../../harness/task-check.js';
import { checkTasksAt } from '../../harness/task-gate.js';
import { findTask } from '../../harness/tasks.js';
import { queueNameFor } from '../../queue/catalog.js';
import { detectGpus } from '../../queue/gpus.js';
import { createInProcessDispatcher } from '../../queue/in-process-dispatcher.js';
import { configOf, writeLine, type CliContext } from '../context.js';
import { renderTable, terminalWidth } from '../table.js';
import { createRemoteDispatcher } from './eval.js';

interface InitOpts {
  name?: string;
  reference?: string;
  op?: string;
  kernel?: string;
  language?: string;
  device?: string;
  arch?: string;
  entry?: string;
  args?: string;
  shapes?: string;
  scenarios?: string;
  dtypes?: string;
  goal?: string;
  summary?: string;
  includeDirs?: string;
  headers?: string;
  out?: string;
  force?: boolean;
  eval: boolean;
  remote?: boolean;
  input: boolean;
}

/** Which flag answers which planning error, for the interactive retry. */
const ASK: Record<string, { flag: keyof InitOpts; question: string }> = {
  init_args: { flag: 'args', question: 'The arguments, in the entry point\'s order, with tensor shapes (e.g. x[rows,cols] y[rows,cols]:out rows:int64 eps:float32=1e-5): ' },
  init_entry: { flag: 'entry', question: 'The entry point (the function the harness calls): ' },
  init_shapes: { flag: 'shapes', question: 'The scenario grid, each param with its values (e.g. rows=64,256 cols=128,1024): ' },
  init_scenarios: { flag: 'scenarios', question: 'Extra scenarios, or nothing (e.g. rows=7,cols=33; rows=1,cols=4097): ' },
  init_dtypes: { flag: 'dtypes', question: 'The dtype of the tensors (float32, float16, bfloat16, int32, int64): ' },
  init_goal: { flag: 'goal', question: 'The goal (e.g. 1.0, 1.2x:best_peer, 1.5x:baseline): ' },
  init_reference: { flag: 'reference', question: `The reference: a well-known op (${OP_NAMES.join(', ')}) or your PyTorch function as file.py:function: ` },
  init_op: { flag: 'reference', question: `The reference: a well-known op (${OP_NAMES.join(', ')}) or your PyTorch function as file.py:function: ` },
  init_device: { flag: 'device', question: 'The device (cpu or cuda): ' },
  init_name: { flag: 'name', question: 'The task\'s name (lower-case letters, digits, _): ' },
  init_kernel: { flag: 'kernel', question: 'Your kernel: a source file or a folder: ' },
};

/** A path as a person would type it here: relative below the working folder, absolute elsewhere. */
function shown(ctx: CliContext, p: string): string {
  const rel = path.relative(ctx.cwd, p);
  return rel === '' ? '.' : rel.startsWith('..') ? p : rel;
}

function inputOf(opts: InitOpts, out: string): InitInput {
  let { op, reference } = opts;
  // One question answers both: a known op's name, or file.py:fn.
  if (reference !== undefined && op === undefined && (OP_NAMES as string[]).includes(reference)) [op, reference] = [reference, undefined];
  return { ...(opts as Omit<InitOpts, 'eval' | 'input'>), name: opts.name!, kernel: opts.kernel!, op, reference, out };
}

async function askMissing(ctx: CliContext, opts: InitOpts): Promise<{ ask: (q: string) => Promise<string>; close: () => void }> {
  const rl = createInterface({ input: ctx.stdin, output: ctx.stderr, terminal: true });
  ctx.signal.addEventListener('abort', () => rl.close(), { once: true });
  const ask = async (q: string) => (await rl.question(q)).trim();
  writeLine(ctx.stderr, 'A new task from your kernel and a reference. Enter takes the [default]; every answer is also a flag (kernelseek task init --help).');
  while (!opts.kernel) opts.kernel = (await ask(ASK.init_kernel!.question)) || undefined;
  const guess = path.basename(opts.kernel).replace(/\.[a-z]+$/, '').toLowerCase().replace(/[^a-z0-9_]/g, '_');
  opts.name ??= (await ask(`The task's name [${guess}]: `)) || guess;
  while (!opts.op && !opts.reference) opts.reference = (await ask(ASK.init_reference!.question)) || undefined;
  opts.device ??= (await ask('The device, cpu or cuda [from the kernel]: ')) || undefined;
  opts.shapes ??= (await ask('The scenario grid, e.g. rows=64,256 cols=128,1024 [the operator\'s own, if it is a well-known one]: ')) || undefined;
  opts.goal ??= (await ask('The goal: speedup vs the fastest peer [1.0], or e.g. 1.5x:baseline: ')) || undefined;
  return { ask, close: () => rl.close() };
}

async function evaluateBaseline(ctx: CliContext, config: Config, dir: string, name: string, opts: InitOpts): Promise<void> {
  const loaded = await findTask(config.core.tasksDir, name);
  const baselinePath = path.join(dir, loaded.task.kernel.baseline);
  const rel = shown(ctx, baselinePath);
  const tasksEnv = path.resolve(config.core.tasksDir) === path.resolve(configOf(ctx).core.tasksDir) ? '' : `KERNELSEEK_TASKS_DIR=${shown(ctx, config.core.tasksDir)} `;
  const arch = loaded.task.device === 'cuda' ? loaded.task.architectures[0] : undefined;
  if (loaded.task.device === 'cuda' && !opts.remote) {
    const gpus = await detectGpus(Object.fromEntries(Object.entries(ctx.env).filter((e): e is [string, string] => e[1] !== undefined)));
    if (gpus.kind === 'none') {
      writeLine(ctx.stdout, `\nNo GPU here (${gpus.reason}): the baseline was not evaluated. On a GPU worker (queue ${queueNameFor('evaluate', arch)}):`);
      writeLine(ctx.stdout, `  ${tasksEnv}kernelseek eval ${name} ${rel} --scenarios quick --remote`);
      writeLine(ctx.stdout, `or only compile it here: ${tasksEnv}kernelseek eval ${name} ${rel} --compile-only   (or run task init again with --remote)`);
      return;
    }
  }
  writeLine(ctx.stdout, `\nEvaluating the baseline on the quick scenarios (${loaded.quick.map((s) => s.id).join(', ')})${opts.remote ? ` on a GPU worker (${queueNameFor('evaluate', arch ?? 'cpu')})` : ' here'}...`);
  const dispatcher = opts.remote ? await createRemoteDispatcher(ctx, config, arch ?? 'cpu') : createInProcessDispatcher(config, { env: ctx.env });
  let outcome;
  try {
    const candidate = await readCandidate(baselinePath, loaded.layout);
    outcome = await dispatcher.evaluate(
      { task: name, ...(loaded.layout.folder ? { files: candidate } : { source: Object.values(candidate)[0]! }), fileName: loaded.task.kernel.file, scenarios: 'quick', device: loaded.task.device, arch },
      { signal: ctx.signal },
    );
  } finally {
    await dispatcher.close();
  }
  if (outcome.status === 'harness_error') {
    writeLine(ctx.stdout, `The evaluation produced no result: ${outcome.message}`);
    if (outcome.stderrTail.trim()) writeLine(ctx.stdout, outcome.stderrTail.trimEnd().split('\n').slice(-8).join('\n'));
    ctx.exitCode = 1;
    return;
  }
  const r = outcome.result;
  writeLine(ctx.stdout, renderTable(SCENARIO_HEADERS, scenarioRows(r), { width: terminalWidth(ctx.stdout) }));
  const failures = failureLines(r);
  if (!r.correct) {
    writeLine(ctx.stdout, `\nThe baseline is ${r.status} against the reference (${r.summary.correct}/${r.summary.scenarios} scenarios correct): the reference and the kernel disagree.`);
    if (failures.length) writeLine(ctx.stdout, failures.join('\n'));
    writeLine(ctx.stdout, `Fix reference.py (or the kernel, or the tolerance in task.yaml), then: ${tasksEnv}kernelseek eval ${name} ${rel} --scenarios quick`);
    ctx.exitCode = 1;
    return;
  }
  const times = r.scenarios.map((s) => `${s.id} ${typeof s.time_ms === 'number' ? `${s.time_ms.toPrecision(3)} ms` : '—'}`);
  writeLine(ctx.stdout, `\nThe baseline agrees with the reference on ${r.summary.correct}/${r.summary.scenarios} scenarios. Its speed: ${times.join(', ')}.`);
  const peers = Object.entries(r.summary.speedup_vs_peer_geomean).filter(([, x]) => typeof x === 'number');
  if (peers.length) {
    writeLine(ctx.stdout, `Peers found: ${peers.map(([p, x]) => `${p} (the baseline runs ${x! >= 0.1 ? x!.toFixed(2) : x!.toPrecision(2)}x as fast)`).join(', ')}${r.summary.best_peer ? `; the fastest: ${r.summary.best_peer}` : ''}.`);
  } else writeLine(ctx.stdout, 'Peers found: none ran (see the notes).');
  for (const m of r.messages) writeLine(ctx.stdout, `note: ${m}`);
  await recordBaselineFigures(configOf(ctx).core.dataDir, loaded, r);
  const goal = loaded.task.goal;
  const best = r.summary.best_peer ? r.summary.speedup_vs_peer_geomean[r.summary.best_peer] : null;
  if (goal.vs === 'best_peer' && typeof best === 'number' && best >= goal.speedup) {
    writeLine(ctx.stdout, `warning: the baseline already meets the goal (${goal.speedup}x the fastest peer): raise goal.speedup in task.yaml above ${best.toFixed(2)}.`);
  }
}

export function registerTask(program: Command, ctx: CliContext): void {
  const task = program.command('task').description('Make a new task: `task init` writes a task folder from your kernel and a reference, then checks and evaluates it');
  task
    .command('init')
    .description('Write a task folder (task.yaml, reference.py, the baseline) from your kernel and a reference, check it and evaluate the baseline. Asks for what is missing on a terminal; all by flags otherwise.')
    .option('--name <name>', "the task's name (lower-case letters, digits, _), also its folder's")
    .option('--kernel <path>', 'your kernel: a source file (.cpp, .cu, .py for Triton) or a folder of sources and headers; it becomes the baseline')
    .option('--op <op>', `the reference is a well-known operator: ${OP_NAMES.join(', ')}`)
    .option('--reference <file.py:fn>', 'the reference is your PyTorch function (its file is copied into reference.py)')
    .option('--language <language>', 'cuda, cpp or triton (default: from the kernel)')
    .option('--device <device>', 'cpu or cuda (default: from the language; Triton: cuda)')
    .option('--arch <sm_xx>', 'cuda tasks: the architectures, e.g. sm_90 or sm_90,sm_100 (default sm_90)')
    .option('--entry <name>', 'the function the harness calls (default: the only one the kernel exports)')
    .option('--args <spec>', 'the arguments in order, with tensor shapes: "x[rows,cols] y[rows,cols]:out rows:int64 eps:float32=1e-5" (default: read from the kernel, shapes from the operator)')
    .option('--shapes <grid>', 'the scenario grid: "rows=64,256 cols=128,1024" (default: the operator\'s)')
    .option('--scenarios <list>', 'scenarios added to the grid: "rows=7,cols=33; rows=1,cols=4097"')
    .option('--dtypes <dtypes>', 'the tensors\' dtype, or per tensor: float32 | x=bfloat16,y=float32 (default: from the kernel, else float32)')
    .option('--goal <goal>', 'the target speedup: 1.0 (vs the fastest peer), 1.5x:baseline (default 1.0)')
    .option('--summary <text>', 'one line for people (default: from the operator or the function)')
    .option('--include-dirs <dirs>', 'include folders, relative to the kernel folder or the task')
    .option('--headers <families>', 'header families the set-up provides: cutlass (CUTLASS and CuTe)')
    .option('--out <dir>', 'where the task folder goes (default: the tasks folder, kernels/)')
    .option('--force', 'replace a task folder of that name')
    .option('--no-eval', 'write and check only; do not evaluate the baseline')
    .option('--remote', 'evaluate the baseline on a GPU worker (through REDIS_URL)')
    .option('--no-input', 'never ask: fail on a missing flag (the default when no terminal is attached)')
    .action(async (opts: InitOpts) => {
      const base = configOf(ctx);
      const out = opts.out ? path.resolve(ctx.cwd, opts.out) : base.core.tasksDir;
      const tty = opts.input && ctx.interactive && Boolean((ctx.stdin as { isTTY?: boolean }).isTTY);
      let prompt: Awaited<ReturnType<typeof askMissing>> | undefined;
      if (tty) prompt = await askMissing(ctx, opts);
      else {
        const missing = [!opts.kernel && '--kernel', !opts.name && '--name', !opts.op && !opts.reference && '--op or --reference'].filter(Boolean);
        if (missing.length) throw new UserInputError(`task init needs ${missing.join(', ')} (no terminal to ask on). E.g.: kernelseek task init --name my_softmax --kernel softmax.cpp --op softmax --device cpu`, { code: 'init_flags' });
      }
      let sources;
      try {
        for (let attempt = 0; ; attempt++) {
          try {
            sources = await planTask(inputOf(opts, out));
            break;
          } catch (error) {
            // On a terminal, a mistake is asked again (what was wrong, then the question); otherwise it is the error.
            const fix = error instanceof AppError ? ASK[error.code] : undefined;
            if (!prompt || !fix || attempt >= 6) throw error;
            writeLine(ctx.stderr, (error as AppError).userMessage);
            (opts as unknown as Record<string, string | undefined>)[fix.flag] = (await prompt.ask(fix.question)) || undefined;
          }
        }
      } finally {
        prompt?.close();
      }
      const dir = await writeTaskFolder(out, sources, Boolean(opts.force));
      const files = ['task.yaml', 'reference.py', sources.plan.baseline];
      writeLine(ctx.stdout, `Wrote ${shown(ctx, dir)}/: ${files.join(', ')} (${sources.plan.language}, ${sources.plan.device}, entry ${sources.plan.entry}, ${sources.plan.params.join(' x ')} scenarios, goal ${sources.plan.goal.speedup.toFixed(1)}x ${sources.plan.goal.vs}).`);

      const config = { ...base, core: { ...base.core, tasksDir: out } };
      const { checks, notes } = await checkTasksAt(dir, { config, env: ctx.env, harness: true });
      const problems = checks.flatMap((c) => c.problems);
      const errors = problems.filter((p) => p.severity === 'error');
      writeLine(ctx.stdout, `\nCheck: ${errors.length} error${errors.length === 1 ? '' : 's'}, ${problems.length - errors.length} warning${problems.length - errors.length === 1 ? '' : 's'}.`);
      for (const p of problems) writeLine(ctx.stdout, `  ${formatCheckProblem(p).replace(/\n/g, '\n  ')}`);
      for (const n of [...notes, ...checks.flatMap((c) => c.notes)]) writeLine(ctx.stdout, `  note: ${n}`);
      if (errors.length > 0) {
        writeLine(ctx.stdout, `Fix them in ${shown(ctx, dir)}, then: kernelseek tasks --check ${shown(ctx, dir)}`);
        ctx.exitCode = 1;
        return;
      }
      if (opts.eval) await evaluateBaseline(ctx, config, dir, sources.plan.name, opts);
      if (ctx.exitCode === 0) writeLine(ctx.stdout, `\nThe task is ready: edit ${shown(ctx, dir)}/task.yaml as you like, then \`kernelseek run ${sources.plan.name}\`${out === base.core.tasksDir ? '' : ` (with KERNELSEEK_TASKS_DIR=${shown(ctx, out)})`}.`);
    });
}
