import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { parseDuration } from '../../config/index.js';
import { UserInputError } from '../../core/errors.js';
import { failureLines, progressLine, scenarioRows, SCENARIO_HEADERS, summaryLines } from '../../harness/result-view.js';
import { findTask, type LoadedTask } from '../../harness/tasks.js';
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
}

const EXTENSIONS: Record<string, string[]> = { cuda: ['.cu'], cpp: ['.cpp', '.cc', '.cxx'] };

async function readKernel(file: string, loaded: LoadedTask): Promise<string> {
  const { task } = loaded;
  const allowed = EXTENSIONS[task.kernel.language] ?? [];
  const ext = path.extname(file);
  if (!allowed.includes(ext)) {
    const what = task.kernel.language === 'cuda' ? 'a CUDA task: the kernel must be a .cu file' : `a ${task.device} task: the kernel must be a ${allowed.join(' or ')} file`;
    throw new UserInputError(`${task.name} is ${what} (got ${path.basename(file)}; the task's own is ${task.kernel.file}).`, { code: 'kernel_file' });
  }
  const info = await stat(file).catch(() => undefined);
  if (!info) throw new UserInputError(`Kernel file not found: ${file}`, { code: 'kernel_file' });
  if (!info.isFile()) throw new UserInputError(`${file} is not a file: give the one kernel source file to evaluate.`, { code: 'kernel_file' });
  const source = await readFile(file, 'utf8');
  if (source.trim() === '') throw new UserInputError(`${file} is empty.`, { code: 'kernel_file' });
  return source;
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
async function createRemoteDispatcher(ctx: CliContext, config: Config, arch: string | undefined): Promise<Dispatcher> {
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
    .argument('<kernel>', "the candidate's single source file (.cu for CUDA tasks, .cpp for cpu tasks)")
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
      const source = await readKernel(path.resolve(ctx.cwd, kernel), loaded);
      const options = parseOptions(opts);
      const outFile = opts.out === undefined ? undefined : await checkOutFile(path.resolve(ctx.cwd, opts.out));
      const arch = pickArch(loaded, opts);
      const dispatcher = opts.remote ? await createRemoteDispatcher(ctx, config, arch) : createInProcessDispatcher(config, { env: ctx.env });
      const progress = progressPrinter(ctx, Boolean(opts.json));
      let outcome;
      try {
        outcome = await dispatcher.evaluate(
          { task: loaded.task.name, source, fileName: loaded.task.kernel.file, scenarios: opts.scenarios, device: loaded.task.device, arch, options },
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
        ctx.exitCode = 1;
        return;
      }
      ctx.exitCode = outcome.result.correct && outcome.status === 'ok' ? 0 : 1;
      if (outFile) await writeFile(outFile, `${JSON.stringify(outcome.result, null, 1)}\n`);
      const compile = compileFailure(outcome.result, { path: path.relative(ctx.cwd, path.resolve(ctx.cwd, kernel)) || kernel, harnessName: loaded.task.kernel.file });
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
