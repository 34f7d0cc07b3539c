import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { parseDuration } from '../../config/index.js';
import { UserInputError } from '../../core/errors.js';
import { failureLines, progressLine, scenarioRows, SCENARIO_HEADERS, summaryLines } from '../../harness/result-view.js';
import { findTask, type LoadedTask } from '../../harness/tasks.js';
import { recordBaselineFigures } from '../../harness/baseline-figures.js';
import { readCandidate, type CandidateFiles } from '../../harness/candidate.js';
import type { EvalResult } from '../../harness/result.js';
import { assertTaskReady } from '../../harness/task-gate.js';
import { queueNameFor } from '../../queue/catalog.js';
import { detectGpus } from '../../queue/gpus.js';
import type { Dispatcher, EvaluationOptions, EvaluationProgress } from '../../queue/dispatcher.js';
import { createInProcessDispatcher } from '../../queue/in-process-dispatcher.js';
import type { Config } from '../../config/index.js';
import { configOf, writeLine, type CliContext } from '../context.js';
import { renderTable, terminalWidth } from '../table.js';
import { compileFailure, notesShown } from '../compile-report.js';
import { createProgressTracker } from '../../harness/progress-tracker.js';

interface EvalOpts {
  scenarios: string;
  json?: boolean;
  device?: string;
  remote?: boolean;
  arch?: string;
  seeds?: string;
  peers: boolean;
  baseline: boolean;
  timeout?: string;
  callTimeout?: string;
  out?: string;
  compileOnly?: boolean;
}

const EXTENSIONS: Record<string, string[]> = { cuda: ['.cu'], cpp: ['.cpp', '.cc', '.cxx'], triton: ['.py'] };

/** The candidate given on the command line: one file, or a folder for a folder task. */
async function readKernel(file: string, loaded: LoadedTask): Promise<{ source: string } | { files: CandidateFiles }> {
  const { task, layout } = loaded;
  const info = await stat(file).catch(() => undefined);
  if (layout.folder) {
    if (!info) throw new UserInputError(`Kernel folder not found: ${file}`, { code: 'kernel_file' });
    if (!info.isDirectory()) throw new UserInputError(`${task.name} takes a folder of sources (its own is ${task.kernel.file}); ${file} is a file: give the folder that holds it.`, { code: 'kernel_file' });
    return { files: await readCandidate(file, layout) };
  }
  const allowed = EXTENSIONS[layout.language] ?? [];
  const ext = path.extname(file);
  if (!allowed.includes(ext)) {
    const what = layout.language === 'cuda' ? 'a CUDA task: the kernel must be a .cu file' : layout.language === 'triton' ? 'a Triton task: the kernel must be a .py file' : `a ${task.device} task: the kernel must be a ${allowed.join(' or ')} file`;
    throw new UserInputError(`${task.name} is ${what} (got ${path.basename(file)}; the task's own is ${task.kernel.file}).`, { code: 'kernel_file' });
  }
  if (!info) throw new UserInputError(`Kernel file not found: ${file}`, { code: 'kernel_file' });
  if (!info.isFile()) throw new UserInputError(`${file} is not a file: give the one kernel source file to evaluate.`, { code: 'kernel_file' });
  const source = await readFile(file, 'utf8');
  if (source.trim() === '') throw new UserInputError(`${file} is empty.`, { code: 'kernel_file' });
  return { source };
}

/**
 * A CUDA task on a machine without a GPU: says where it can run instead (the GPU workers' queue, with
 * --remote) and what can be done here (--compile-only), before anything is started.
 */
async function refuseWithoutGpu(ctx: CliContext, config: Config, loaded: LoadedTask, kernel: string): Promise<void> {
  const env = Object.fromEntries(Object.entries(ctx.env).filter((e): e is [string, string] => e[1] !== undefined));
  const gpus = await detectGpus(env);
  if (gpus.kind === 'gpus') return;
  const arch = loaded.task.architectures[0] ?? 'sm_90';
  const queue = queueNameFor('evaluate', arch);
  throw new UserInputError(
    [
      `${loaded.task.name} is a CUDA task and this machine has no GPU (${gpus.reason}).`,
      `  Send it to a GPU worker: kernelseek eval ${loaded.task.name} ${kernel} --remote   (queue ${queue}, through REDIS_URL; --arch chooses among ${loaded.task.architectures.join(', ')})`,
      `  Or only compile it here, with the harness's source and binary checks (registers, shared memory, spills): kernelseek eval ${loaded.task.name} ${kernel} --compile-only`,
    ].join('\n'),
    { code: 'no_gpu' },
  );
}

/** `--compile-only`: what the compiler and the checks said, without scenarios. */
function printCompileOnly(ctx: CliContext, result: EvalResult, kernel: string): void {
  const c = result.compile;
  const figures = [c.registers != null ? `${c.registers} registers` : undefined, c.smem_bytes != null ? `${c.smem_bytes} bytes of shared memory` : undefined, c.spills != null ? `${c.spills} bytes spilled` : undefined].filter(Boolean);
  if (result.status === 'ok') {
    writeLine(ctx.stdout, `${kernel}: compiled${c.seconds != null ? ` in ${c.seconds.toFixed(1)} s` : ''}; source and binary checks passed${figures.length ? ` — ${figures.join(', ')}` : ''}.`);
  } else {
    writeLine(ctx.stdout, `${kernel}: ${result.status.replace('_', ' ')}${figures.length ? ` (${figures.join(', ')})` : ''}`);
    if (c.log.trim()) writeLine(ctx.stdout, c.log.trimEnd().split('\n').slice(-40).map((l) => `  ${l}`).join('\n'));
  }
  for (const m of result.messages) if (!m.startsWith('compile only:')) writeLine(ctx.stdout, `note: ${m}`);
  writeLine(ctx.stdout, 'No scenario ran (--compile-only).');
}

function parseOptions(opts: EvalOpts): EvaluationOptions {
  const out: EvaluationOptions = {};
  if (opts.seeds !== undefined) {
    const n = Number(opts.seeds);
    if (!Number.isInteger(n) || n < 2) throw new UserInputError(`--seeds ${opts.seeds}: give a whole number of at least 2.`);
    out.seeds = n;
  }
  if (!opts.peers) out.peers = false;
  if (!opts.baseline) out.baseline = false;
  if (opts.timeout !== undefined) {
    const s = parseDuration(opts.timeout);
    if (s === undefined || s <= 0) throw new UserInputError(`--timeout ${opts.timeout}: give a duration such as 90s, 10m or 1h.`);
    out.timeoutSeconds = s;
  }
  if (opts.callTimeout !== undefined) {
    const s = parseDuration(opts.callTimeout);
    if (s === undefined || s <= 0) throw new UserInputError(`--call-timeout ${opts.callTimeout}: give a duration such as 30s.`);
    out.callTimeoutSeconds = s;
  }
  if (opts.compileOnly) out.compileOnly = true;
  return out;
}

/** Fails before a long evaluation, not after it, when the result could not be written. */
async function checkOutFile(file: string): Promise<string> {
  const dir = await stat(path.dirname(file)).catch(() => undefined);
  if (!dir?.isDirectory()) throw new UserInputError(`--out ${file}: the folder ${path.dirname(file)} does not exist.`);
  const existing = await stat(file).catch(() => undefined);
  if (existing?.isDirectory()) throw new UserInputError(`--out ${file} is a folder: give a file name for the result JSON.`);
  return file;
}

/** Which worker pool evaluates it: `cpu` for cpu tasks, else the requested (or first) architecture. */
function pickArch(loaded: LoadedTask, opts: EvalOpts): string | undefined {
  const { task } = loaded;
  if (opts.arch !== undefined && !opts.remote) throw new UserInputError('--arch chooses the GPU workers and needs --remote.');
  if (!opts.remote) return undefined;
  if (task.device === 'cpu') {
    if (opts.arch !== undefined && opts.arch !== 'cpu') throw new UserInputError(`${task.name} is a cpu task: it runs on the eval-cpu queue; drop --arch ${opts.arch}.`);
    return 'cpu';
  }
  const arch = opts.arch ?? task.architectures[0];
  if (!arch || !task.architectures.includes(arch)) {
    throw new UserInputError(`${task.name} supports ${task.architectures.join(', ')}; --arch ${opts.arch} is not one of them.`);
  }
  return arch;
}

/** A single updating line on a terminal, plain lines otherwise (logs, CI). */
function progressPrinter(ctx: CliContext, json: boolean): { show(p: EvaluationProgress): void; clear(): void } {
  let live = false;
  const tracker = createProgressTracker();
  const width = terminalWidth(ctx.stderr) ?? terminalWidth(ctx.stdout) ?? 100;
  return {
    show(p) {
      if (ctx.interactive) {
        ctx.stderr.write(`\r\x1b[2K${tracker.line(p).slice(0, width - 1)}`);
        live = true;
      } else if (!json) {
        const line = progressLine(p, false);
        if (line) writeLine(ctx.stderr, line);
      }
    },
    clear() {
      if (live) ctx.stderr.write('\r\x1b[2K');
      live = false;
    },
  };
}

/**
 * The dispatcher for --remote, and with it BullMQ and ioredis: imported here, on demand, so that
 * `kernelseek eval` without --remote (and `help eval`) starts without loading them.
 */
export async function createRemoteDispatcher(ctx: CliContext, config: Config, arch: string | undefined): Promise<Dispatcher> {
  const [{ Redis }, queue] = await Promise.all([import('ioredis'), import('../../queue/index.js')]);
  await queue.checkRedis(config.redis.url);
  const harness = await queue.computeHarnessVersion(config.core.repoRoot);
  const base = queue.queueNameFor('evaluate', arch);
  const redis = new Redis({ ...queue.redisOptionsFromUrl(config.redis.url), lazyConnect: true });
  try {
    const match = queue.matchWorkers(await queue.listWorkers(redis, config.queue.prefix), base, harness.id);
    if (match.matching.length === 0) {
      const other = queue.describeOtherHarness(match, harness.version, "this checkout's");
      writeLine(
        ctx.stderr,
        `No worker with this checkout's harness (${harness.version}) is attached to ${base} right now${other ? `; ${other}` : ''}: the job waits in ${match.queue} until one starts (Ctrl-C cancels it).`,
      );
    }
  } finally {
    redis.disconnect();
  }
  return queue.createBullmqDispatcher({
    connection: queue.redisOptionsFromUrl(config.redis.url),
    prefix: config.queue.prefix,
    resultKey: await queue.loadResultKey(config),
    harness,
    repoRoot: config.core.repoRoot,
    tasksDir: config.core.tasksDir,
  });
}

export function registerEval(program: Command, ctx: CliContext): void {
  program
    .command('eval')
    .description('Evaluate one kernel file against a task with the harness (correctness on every scenario, timing vs baseline and peers)')
    .argument('<task>', 'task name (see `kernelseek tasks`)')
    .argument('<kernel>', "the candidate: its source file (.cu for CUDA tasks, .cpp for cpu tasks, .py for Triton tasks), or its folder for a task whose kernel is a folder")
    .option('--scenarios <selection>', 'all, quick, or a filter: comma-separated substrings or globs of scenario ids', 'all')
    .option('--json', 'print only the result JSON (kernelseek.eval/1) on stdout')
    .option('--device <device>', "cpu or cuda (default: the task's device)")
    .option('--remote', 'submit the evaluation through Redis (REDIS_URL) to the GPU workers instead of running it here')
    .option('--arch <arch>', "with --remote: which workers, e.g. sm_90 (default: the task's first architecture)")
    .option('--seeds <n>', 'correctness seeds per scenario (at least 2; default 2)')
    .option('--no-peers', "do not time the task's peers")
    .option('--no-baseline', 'do not time the baseline')
    .option('--timeout <duration>', 'hard limit for the whole evaluation, e.g. 10m (default 30m)')
    .option('--call-timeout <duration>', 'a call of the kernel that makes no progress this long counts as hung (default 30s)')
    .option('--out <file>', 'also write the result JSON (kernelseek.eval/1) to this file, whatever is printed')
    .option('--compile-only', 'only compile and run the source and binary checks (registers, shared memory, spills); works without a GPU')
    .addHelpText(
      'after',
      '\nExit status: 0 when the candidate is correct on every selected scenario; 1 otherwise (incorrect,\ncompile error, rejected, timed out, crashed, the harness failed, or the input was wrong, e.g. an\nunknown task); 2 when the command line itself is malformed.',
    )
    .action(async (taskName: string, kernel: string, opts: EvalOpts) => {
      const config = configOf(ctx);
      const loaded = await findTask(config.core.tasksDir, taskName);
      if (opts.device !== undefined && opts.device !== loaded.task.device) {
        throw new UserInputError(`${loaded.task.name} runs on ${loaded.task.device}; --device ${opts.device} is not possible.`);
      }
      const candidate = await readKernel(path.resolve(ctx.cwd, kernel), loaded);
      const options = parseOptions(opts);
      const outFile = opts.out === undefined ? undefined : await checkOutFile(path.resolve(ctx.cwd, opts.out));
      const arch = pickArch(loaded, opts);
      // The task's own mistakes (reference.py, the baseline's signature, ...) all at once, before a run.
      const check = await assertTaskReady(loaded, { config, env: ctx.env });
      const warnings = check.problems.filter((p) => p.severity === 'warning').length;
      if (warnings > 0 && !opts.json) writeLine(ctx.stderr, `note: the task has ${warnings} warning${warnings === 1 ? '' : 's'} (\`kernelseek tasks --check ${path.relative(ctx.cwd, loaded.dir) || '.'}\` shows them)`);
      if (loaded.task.device === 'cuda' && !opts.remote && !opts.compileOnly) await refuseWithoutGpu(ctx, config, loaded, kernel);
      const dispatcher = opts.remote ? await createRemoteDispatcher(ctx, config, arch) : createInProcessDispatcher(config, { env: ctx.env });
      const progress = progressPrinter(ctx, Boolean(opts.json));
      let outcome;
      try {
        outcome = await dispatcher.evaluate(
          { task: loaded.task.name, ...candidate, fileName: loaded.task.kernel.file, scenarios: opts.scenarios, device: loaded.task.device, arch, options },
          { signal: ctx.signal, onProgress: (p) => progress.show(p) },
        );
      } catch (error) {
        if (!ctx.signal.aborted) throw error;
        outcome = undefined;
      } finally {
        progress.clear();
        await dispatcher.close();
      }
      if (!outcome || ctx.signal.aborted) {
        writeLine(ctx.stderr, opts.remote ? 'cancelled (a job that had not started was taken out of the queue)' : 'cancelled');
        ctx.exitCode = 130;
        return;
      }
      if (outcome.status === 'harness_error') {
        writeLine(ctx.stderr, `error: the evaluation produced no result: ${outcome.message}`);
        if (outcome.stderrTail.trim()) writeLine(ctx.stderr, `--- harness stderr (last lines) ---\n${outcome.stderrTail.trimEnd()}`);
        if (/exit status 4/.test(outcome.message) && loaded.task.device === 'cuda' && !opts.remote) {
          writeLine(ctx.stderr, `To run it on a GPU worker: kernelseek eval ${loaded.task.name} ${kernel} --remote; to compile it here only: --compile-only.`);
        }
        ctx.exitCode = 1;
        return;
      }
      if (outFile) await writeFile(outFile, `${JSON.stringify(opts.compileOnly ? ((outcome.result as { compile_only?: unknown }).compile_only ?? outcome.result) : outcome.result, null, 1)}\n`);
      if (opts.compileOnly) {
        ctx.exitCode = outcome.status === 'ok' ? 0 : 1;
        if (opts.json) writeLine(ctx.stdout, JSON.stringify((outcome.result as { compile_only?: unknown }).compile_only ?? outcome.result, null, 1));
        else printCompileOnly(ctx, outcome.result, kernel);
        return;
      }
      ctx.exitCode = outcome.result.correct && outcome.status === 'ok' ? 0 : 1;
      // The baseline's speed against the peers, for the task check's "already meets the goal".
      await recordBaselineFigures(config.core.dataDir, loaded, outcome.result);
      const compile = compileFailure(outcome.result, { path: path.relative(ctx.cwd, path.resolve(ctx.cwd, kernel)) || kernel, harnessName: loaded.layout.name });
      if (opts.json) {
        writeLine(ctx.stdout, JSON.stringify(outcome.result, null, 1));
        if (compile) writeLine(ctx.stderr, `error: ${compile.error}`);
        return;
      }
      if (compile) {
        writeLine(ctx.stdout, `compiler output:\n${compile.output.map((l) => `  ${l}`).join('\n')}\n`);
      } else {
        writeLine(ctx.stdout, renderTable(SCENARIO_HEADERS, scenarioRows(outcome.result), { width: terminalWidth(ctx.stdout) }));
        const failures = failureLines(outcome.result);
        if (failures.length > 0) writeLine(ctx.stdout, `\nwhy scenarios failed:\n${failures.join('\n')}`);
        writeLine(ctx.stdout);
      }
      for (const line of summaryLines({ ...outcome, result: { ...outcome.result, messages: notesShown(outcome.result) } })) writeLine(ctx.stdout, line);
      if (compile) writeLine(ctx.stderr, `error: ${compile.error}`);
    });
}
