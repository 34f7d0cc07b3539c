import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Env } from '../config/index.js';
import type { CoreConfig } from '../config/modules/core.js';
import type { HarnessConfig } from '../config/modules/harness.js';
import { describeError, UserInputError } from '../core/errors.js';
import { readBeneath } from '../core/safe-read.js';
import type { EvaluationOptions, EvaluationProgress } from './evaluation.js';
import { CappedOutput, tailOf } from './capped-output.js';
import { checkCandidateFiles, isFolderName, KERNEL_FILE_RE, type CandidateFiles } from './candidate.js';

export { KERNEL_FILE_RE };
import { runGuarded } from './process-group.js';
import { CompileResultSchema, compileOnlyAsEval, EvalResultSchema, type EvalOutcome } from './result.js';
import { parseProgressLine } from './runner-progress.js';
import { resolvePython } from './runner-python.js';

/** One evaluation, as the harness runner takes it (the task comes from the trusted checkout). */
export interface HarnessRunRequest {
  task: string;
  /** A one-file candidate's text; a folder candidate comes as `files` instead. */
  source?: string;
  /** A folder candidate: {path inside the folder: text} (task.yaml `kernel.file: kernel/`). */
  files?: CandidateFiles;
  /** task.yaml `kernel.file`: `kernel.cu`, `kernel.py`, or a folder `kernel/`. */
  fileName: string;
  scenarios: string;
  device?: 'cpu' | 'cuda';
  options?: EvaluationOptions;
  /** The run's best kernel so far: timed beside the candidate (speedup_vs_incumbent, verdict_vs_incumbent). */
  incumbent?: string;
  incumbentFiles?: CandidateFiles;
}

export interface RunHarnessOptions {
  config: { core: CoreConfig; harness: HarnessConfig };
  /** The environment the runner was started with; only an allowlist reaches the harness. */
  env: Env;
  /** Pins the evaluation to one GPU (CUDA_VISIBLE_DEVICES); undefined leaves the variable as it is. */
  gpuIndex?: number | null;
  /** Used when the request sets no time limit. */
  defaultTimeoutSeconds?: number;
  signal?: AbortSignal;
  onProgress?: (progress: EvaluationProgress) => void;
  /** The harness's process id (its process group id too), once it started. */
  onSpawn?: (pid: number) => void;
}

export const DEFAULT_EVAL_TIMEOUT_SECONDS = 1800;
/** Temp folders of evaluations in progress (a crashed worker's are swept by the next one). */
export const CANDIDATE_DIR_PREFIX = 'kernelseek-candidate-';

/**
 * Where the runner makes an evaluation's folder: the temp directory, unless a folder on its way is
 * closed to other users (a private TMPDIR: mkdtemp's 0700), then /tmp. A root harness starts its
 * sandboxes as an unprivileged uid, which must reach the build folders made below it.
 */
export async function traversableTmpdir(base = os.tmpdir()): Promise<string> {
  if (process.getuid?.() !== 0) return base;
  let dir = path.resolve(base);
  for (;;) {
    const st = await stat(dir).catch(() => undefined);
    if (!st || (st.mode & 0o001) === 0) return '/tmp';
    const parent = path.dirname(dir);
    if (parent === dir) return base;
    dir = parent;
  }
}
export const TASK_NAME_RE = /^[a-z0-9_]+$/;
const STDERR_TAIL_CHARS = 4000;
/** A result file larger than this is not read (a full result is a few hundred KB). */
const MAX_RESULT_BYTES = 64 * 2 ** 20;

/**
 * What the harness (and the candidate it loads) may see of our environment: enough to find
 * compilers, CUDA and a locale, and nothing else. API keys and tokens stay out of reach of the
 * candidate's code.
 */
const PASSED_VARIABLES = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'LD_LIBRARY_PATH', 'CUDA_HOME', 'CUDA_PATH', 'CUDA_VISIBLE_DEVICES'];

export function harnessEnvironment(env: Env, config: RunHarnessOptions['config'], gpuIndex?: number | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of PASSED_VARIABLES) {
    const value = env[name];
    if (value !== undefined) out[name] = value;
  }
  out.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  out.KERNELSEEK_DATA_DIR = config.core.dataDir;
  out.KERNELSEEK_NVCC = config.harness.nvcc;
  out.PYTHONUNBUFFERED = '1';
  // The checkout is shared by every evaluation; keep it free of bytecode written at run time.
  out.PYTHONDONTWRITEBYTECODE = '1';
  if (gpuIndex !== undefined && gpuIndex !== null) {
    out.CUDA_VISIBLE_DEVICES = String(gpuIndex);
    // nvidia-smi numbers GPUs by PCI bus; CUDA's default order may differ.
    out.CUDA_DEVICE_ORDER = 'PCI_BUS_ID';
  }
  return out;
}

/** Checks what the runner will put on disk and on a command line; the harness checks the rest. */
export function validateRunRequest(request: HarnessRunRequest): void {
  if (!TASK_NAME_RE.test(request.task)) {
    throw new UserInputError(`'${request.task}' is not a task name: task names are lower-case letters, digits and _.`, { code: 'task_unknown' });
  }
  if (!KERNEL_FILE_RE.test(request.fileName)) {
    throw new UserInputError(`'${request.fileName}' is not a kernel file name: use a plain file name ending in .cu, .cpp or .py (e.g. kernel.cu), or a folder name (kernel/).`, { code: 'kernel_file' });
  }
  const folder = isFolderName(request.fileName);
  for (const [what, text, files] of [['candidate', request.source, request.files], ['incumbent', request.incumbent, request.incumbentFiles]] as const) {
    if (what === 'incumbent' && text === undefined && files === undefined) continue;
    if (folder ? files === undefined || text !== undefined : text === undefined || files !== undefined) {
      throw new UserInputError(`the ${what} of ${request.fileName} must come as ${folder ? 'a files map (a folder kernel)' : 'one source text'}`, { code: 'kernel_file' });
    }
    if (files) checkCandidateFiles(files, languageOf(request.fileName, files));
  }
  if (request.scenarios.trim() === '' || request.scenarios.startsWith('-')) {
    throw new UserInputError(`'${request.scenarios}' is not a scenario selection: use all, quick, or a filter such as 'r64-*'.`, { code: 'scenarios' });
  }
  const seeds = request.options?.seeds;
  if (seeds !== undefined && (!Number.isInteger(seeds) || seeds < 2)) {
    throw new UserInputError('seeds must be a whole number of at least 2.', { code: 'seeds' });
  }
}

/** A folder's language as far as the runner needs it (a source of some kind is there). */
function languageOf(fileName: string, files: CandidateFiles) {
  const names = Object.keys(files);
  if (fileName.endsWith('.py') || names.every((n) => n.endsWith('.py'))) return 'triton' as const;
  return names.some((n) => n.endsWith('.cu')) ? ('cuda' as const) : ('cpp' as const);
}

/**
 * Writes a candidate under `root`: the one file as `root/<fileName>`, or a folder's files under
 * `root/<folder>/`; returns the path the harness gets as --candidate. Paths were checked
 * (checkCandidateFiles): relative, plain names, no `..`.
 */
async function writeCandidate(root: string, fileName: string, source: string | undefined, files: CandidateFiles | undefined): Promise<string> {
  await mkdir(root);
  if (!files) {
    const file = path.join(root, fileName);
    await writeFile(file, source ?? '');
    return file;
  }
  const dir = path.join(root, fileName.replace(/\/+$/, ''));
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(dir, rel);
    if (!file.startsWith(dir + path.sep)) throw new UserInputError(`candidate file ${rel} is outside its folder`, { code: 'kernel_file' });
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
  }
  return dir;
}

const EXIT_MEANINGS: Record<number, string> = {
  2: 'it refused the request (bad arguments, or a scenario filter that matches nothing)',
  3: 'the task folder is broken',
  4: 'this machine cannot run the evaluation (no compiler or no CUDA device)',
};

/**
 * The harness's own time budget, a little under the hard limit at which we kill it: counted, like the
 * hard limit, from the process's start (harness/cli.py process_started), it stops a hanging call or
 * the scenarios left in time to write its result.
 */
function innerTimeout(hardSeconds: number): number {
  return Math.max(1, hardSeconds - Math.min(60, Math.max(3, hardSeconds * 0.1)));
}

function harnessArgs(request: HarnessRunRequest, taskDir: string, candidate: string, resultFile: string, cacheDir: string, hardSeconds: number, incumbent: string | null): string[] {
  const o = request.options ?? {};
  const args = ['-m', 'harness', 'eval', '--task-dir', taskDir, '--candidate', candidate, '--scenarios', request.scenarios];
  if (o.compileOnly) args.push('--compile-only');
  args.push('--json', resultFile, '--progress', 'jsonl', '--cache-dir', cacheDir, '--timeout', String(innerTimeout(hardSeconds)));
  if (request.device) args.push('--device', request.device);
  if (o.seeds !== undefined) args.push('--seeds', String(o.seeds));
  if (o.peers === false) args.push('--no-peers');
  if (o.baseline === false) args.push('--no-baseline');
  if (o.callTimeoutSeconds !== undefined) args.push('--call-timeout', String(o.callTimeoutSeconds));
  if (incumbent) args.push('--incumbent', incumbent);
  return args;
}

/**
 * Runs `python3 -m harness eval` on one candidate and returns the outcome. Never throws for what
 * happens inside the harness: a candidate's failure is a result, and a harness that crashed, hung
 * or wrote nothing valid becomes `harness_error` with the end of its stderr. Throws only for a
 * request that is invalid before anything runs (UserInputError).
 */
export async function runHarness(request: HarnessRunRequest, options: RunHarnessOptions): Promise<EvalOutcome> {
  validateRunRequest(request);
  const started = performance.now();
  const wall = () => (performance.now() - started) / 1000;
  const hardSeconds = request.options?.timeoutSeconds ?? options.defaultTimeoutSeconds ?? DEFAULT_EVAL_TIMEOUT_SECONDS;
  const { core } = options.config;
  const env = harnessEnvironment(options.env, options.config, options.gpuIndex);
  let python: string;
  try {
    python = (await resolvePython(options.config.harness.python, env)).path;
  } catch (error) {
    return { status: 'harness_error', message: describeError(error), stderrTail: '', wallSeconds: wall() };
  }

  const cacheDir = path.join(core.dataDir, 'compile-cache');
  await mkdir(cacheDir, { recursive: true });
  const work = await mkdtemp(path.join(await traversableTmpdir(), CANDIDATE_DIR_PREFIX));
  try {
    // Traversable, not listable: a root harness starts its sandboxes as an unprivileged uid, which must
    // reach the build folders the harness makes below it (TMPDIR) and nothing else here.
    await chmod(work, 0o711);
    const resultFile = path.join(work, 'result.json');
    const candidate = await writeCandidate(path.join(work, 'candidate'), request.fileName, request.source, request.files);
    let incumbent: string | null = null;
    if (request.incumbent !== undefined || request.incumbentFiles !== undefined) {
      incumbent = await writeCandidate(path.join(work, 'incumbent'), request.fileName, request.incumbent, request.incumbentFiles);
    }
    // The harness's (and compilers') temp files go inside our folder: removed below even when the
    // harness was killed before it could clean up after itself.
    await mkdir(path.join(work, 'tmp'));
    env.TMPDIR = path.join(work, 'tmp');
    const stderrText = new CappedOutput(64 * 1024);
    const run = await runGuarded(python, harnessArgs(request, path.join(core.tasksDir, request.task), candidate, resultFile, cacheDir, hardSeconds, incumbent), {
      cwd: core.repoRoot,
      env,
      timeoutMs: hardSeconds * 1000,
      signal: options.signal,
      outputCapBytes: 64 * 1024,
      onSpawn: options.onSpawn,
      onStderrLine: (line) => {
        const progress = parseProgressLine(line);
        if (progress) options.onProgress?.(progress);
        else stderrText.append(`${line}\n`);
      },
    });
    const stderrTail = tailOf(stderrText.text(), STDERR_TAIL_CHARS);
    const fail = (message: string): EvalOutcome => ({ status: 'harness_error', message, stderrTail, wallSeconds: wall() });
    if (run.aborted) return fail('the evaluation was cancelled before the harness finished');
    if (run.timedOut) {
      return fail(`the harness was killed at the hard time limit of ${hardSeconds} s before it wrote a result (its process group was killed)`);
    }
    if (run.exitCode !== 0) {
      const how = run.signal ? `was killed by ${run.signal}` : `failed with exit status ${run.exitCode}`;
      const meaning = run.exitCode !== null ? EXIT_MEANINGS[run.exitCode] : undefined;
      const lastLine = stderrTail.trim().split('\n').pop() ?? '';
      return fail(`the harness ${how}${meaning ? `: ${meaning}` : ''}${lastLine ? ` (${lastLine})` : ''}`);
    }
    let raw: unknown;
    try {
      // Beneath our folder, no symlink followed, a regular file: nothing the candidate could plant there is read.
      raw = JSON.parse((await readBeneath(work, path.basename(resultFile), { maxBytes: MAX_RESULT_BYTES })).toString('utf8'));
    } catch (error) {
      return fail(`the harness exited normally but wrote no readable result: ${(error as Error).message}`);
    }
    if (request.options?.compileOnly) {
      const compiled = CompileResultSchema.safeParse(raw);
      if (!compiled.success) return fail(`the harness wrote a compile-only result that does not match kernelseek.compile/1: ${compiled.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
      return { status: compiled.data.status, result: compileOnlyAsEval(compiled.data), wallSeconds: wall() };
    }
    const parsed = EvalResultSchema.safeParse(raw);
    if (!parsed.success) {
      const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
      return fail(`the harness wrote a result that does not match kernelseek.eval/1: ${issues.join('; ')}`);
    }
    return { status: parsed.data.status, result: parsed.data, wallSeconds: wall() };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
