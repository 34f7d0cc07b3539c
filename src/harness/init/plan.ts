import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UserInputError } from '../../core/errors.js';
import { findCEntries } from '../c-signature.js';
import { defaultLanguage, readCandidateFolder, type CandidateFiles, type KernelLanguage } from '../candidate.js';
import { evaluateExpression } from '../expression.js';
import { OP_NAMES, OPS, type OpName } from './ops.js';
import { bytesOf, renderReferencePy, renderTaskYaml, toleranceFor, type InitPlan } from './render.js';
import { argsFromCEntry, paramsOfPythonDef, parseArgSpec, parseDtypes, parseScenarioList, parseShapes, pythonEntryCandidates, resolveArgs, type ArgItem, type InitArg } from './spec.js';

/**
 * From what the person gave `task init` (flags or answers) to a plan of the task folder, and the
 * folder written. Everything is checked before a file is written: a wrong flag loses nothing.
 */

export interface InitInput {
  name: string;
  summary?: string;
  /** `--op softmax` or `--reference file.py:fn`. */
  op?: string;
  reference?: string;
  /** The team's kernel: a file or a folder. */
  kernel: string;
  language?: string;
  device?: string;
  arch?: string;
  entry?: string;
  args?: string;
  shapes?: string;
  scenarios?: string;
  dtypes?: string;
  goal?: string;
  includeDirs?: string;
  headers?: string;
  /** The folder the task folder goes in (its name is `name`). */
  out: string;
}

export interface InitSources {
  plan: InitPlan;
  /** The baseline's files: `{ 'baseline.cpp': text }` or the folder's under `baseline/`. */
  baseline: CandidateFiles;
}

const NAME_RE = /^[a-z0-9_]+$/;

function languageOf(kernel: string, folderFiles: CandidateFiles | undefined, given: string | undefined, device: string | undefined): KernelLanguage {
  if (given !== undefined) {
    if (given !== 'cuda' && given !== 'cpp' && given !== 'triton') throw new UserInputError(`--language ${given}: give cuda, cpp or triton`, { code: 'init_language' });
    return given;
  }
  if (folderFiles) {
    const names = Object.keys(folderFiles);
    if (names.some((n) => n.endsWith('.cu') || n.endsWith('.cuh'))) return 'cuda';
    if (names.some((n) => /\.(cpp|cc|cxx|c)$/.test(n))) return 'cpp';
    if (names.every((n) => n.endsWith('.py'))) return 'triton';
  }
  return defaultLanguage(kernel, device === 'cuda' ? 'cuda' : 'cpu');
}

/** Scenario ids: each param by its first letter (its whole name where two would clash). */
function idTemplate(params: string[]): string {
  const first = params.map((p) => p[0]!.toLowerCase());
  return params.map((p, i) => `${first.filter((f) => f === first[i]).length > 1 ? p : first[i]}{${p}}`).join('-');
}

function scenarioIds(template: string, grid: Record<string, number[]>, list: Record<string, number>[], params: string[]): { grid: string[]; list: string[] } {
  let combos: Record<string, number>[] = [{}];
  for (const p of params) combos = combos.flatMap((c) => grid[p]!.map((v) => ({ ...c, [p]: v })));
  const id = (s: Record<string, number>) => template.replace(/\{(\w+)\}/g, (_, p: string) => String(s[p]));
  return { grid: combos.map(id), list: list.map(id) };
}

function parseGoal(text: string | undefined): InitPlan['goal'] {
  if (text === undefined) return { vs: 'best_peer', speedup: 1 };
  const m = /^(\d+(?:\.\d+)?)x?(?::(best_peer|baseline))?$/.exec(text.trim());
  if (!m || !(Number(m[1]) > 0)) throw new UserInputError(`--goal ${text}: give a speedup, optionally against what: 1.2, 1.5x:baseline, 1.1x:best_peer`, { code: 'init_goal' });
  return { vs: (m[2] as InitPlan['goal']['vs'] | undefined) ?? 'best_peer', speedup: Number(m[1]) };
}

/** Reads the kernel and the reference, and decides every field of the task. */
export async function planTask(input: InitInput): Promise<InitSources> {
  if (!NAME_RE.test(input.name)) throw new UserInputError(`--name ${input.name}: a task name is lower-case letters, digits and _ (it is also the folder's name)`, { code: 'init_name' });
  if ((input.op === undefined) === (input.reference === undefined)) throw new UserInputError(`give the reference as --op <${OP_NAMES.join('|')}> or --reference <file.py>:<function>, one of them`, { code: 'init_reference' });
  const st = await stat(input.kernel).catch(() => undefined);
  if (!st) throw new UserInputError(`--kernel ${input.kernel}: not found`, { code: 'init_kernel' });
  const folder = st.isDirectory();
  const folderFiles = folder ? await readCandidateFolder(input.kernel) : undefined;
  if (folderFiles && Object.keys(folderFiles).length === 0) throw new UserInputError(`--kernel ${input.kernel}: the folder holds no source or header file`, { code: 'init_kernel' });
  const language = languageOf(input.kernel, folderFiles, input.language, input.device);
  const device: 'cpu' | 'cuda' = input.device === 'cpu' || input.device === 'cuda' ? input.device : language === 'cpp' ? 'cpu' : 'cuda';
  if (input.device !== undefined && input.device !== 'cpu' && input.device !== 'cuda') throw new UserInputError(`--device ${input.device}: give cpu or cuda`, { code: 'init_device' });
  if (language === 'cuda' && device === 'cpu') throw new UserInputError('a CUDA kernel runs on --device cuda', { code: 'init_device' });
  if (language === 'cpp' && device === 'cuda') throw new UserInputError('a C++ kernel runs on --device cpu; a CUDA kernel is a .cu file (or --language cuda)', { code: 'init_device' });
  if (language === 'triton' && folder) throw new UserInputError('a Triton kernel is one .py file (its helpers in the same file)', { code: 'init_kernel' });
  const sources: CandidateFiles = folderFiles ?? { [path.basename(input.kernel)]: await readFile(input.kernel, 'utf8') };

  // The entry point and the arguments the kernel itself declares.
  let entry = input.entry;
  let fromKernel: ArgItem[];
  if (language === 'triton') {
    const text = Object.values(sources)[0]!;
    const candidates = pythonEntryCandidates(text);
    entry ??= candidates.length === 1 ? candidates[0] : undefined;
    if (!entry) throw new UserInputError(`give --entry: the entry function of ${input.kernel} (${candidates.length ? `one of ${candidates.join(', ')}` : 'no top-level function that is not @triton.jit was found'})`, { code: 'init_entry' });
    const names = paramsOfPythonDef(text, entry);
    if (!names) throw new UserInputError(`${input.kernel} has no top-level def ${entry}(...)`, { code: 'init_entry' });
    fromKernel = names.map((n) => ({ name: n }));
  } else {
    const entries = Object.values(sources).flatMap((t) => findCEntries(t));
    entry ??= entries.length === 1 ? entries[0]!.name : undefined;
    if (!entry) throw new UserInputError(`give --entry: ${entries.length ? `${input.kernel} exports ${entries.map((e) => e.name).join(', ')}` : `no extern "C" function found in ${input.kernel}; the harness calls one (docs/tasks.md, the kernel ABI)`}`, { code: 'init_entry' });
    const hit = entries.find((e) => e.name === entry);
    if (!hit) throw new UserInputError(`--entry ${entry}: ${input.kernel} has no extern "C" function of that name (${entries.map((e) => e.name).join(', ') || 'none'})`, { code: 'init_entry' });
    fromKernel = argsFromCEntry(hit);
  }

  const op = input.op as OpName | undefined;
  if (op !== undefined && !OP_NAMES.includes(op)) throw new UserInputError(`--op ${op}: the known operators are ${OP_NAMES.join(', ')}; for another, give --reference <file.py>:<function>`, { code: 'init_op' });
  const template = op ? OPS[op] : undefined;
  const shapes = input.shapes ? parseShapes(input.shapes) : template?.shapes[device].grid;
  if (!shapes) throw new UserInputError('give --shapes: the scenario grid, each param with its values, e.g. "rows=64,256 cols=128,1024"', { code: 'init_shapes' });
  const params = Object.keys(shapes);
  const list = input.scenarios ? parseScenarioList(input.scenarios, params) : input.shapes ? [] : [...(template?.shapes[device].list ?? [])];
  const dtypes = parseDtypes(input.dtypes);
  const given = input.args ? parseArgSpec(input.args) : undefined;

  let args: InitArg[];
  const names: Record<string, string> = {};
  if (template) {
    // The operator's arguments, named as the kernel names them: inputs, outputs, scalars and the
    // stream matched in their own order (the kernel's order is what task.yaml keeps).
    const canonical = template.args.filter((a) => a.kind !== 'stream');
    let kernelArgs: InitArg[];
    if (language === 'triton' && !given) {
      // A Python entry says only its parameters' names: they take the operator's arguments in order.
      if (fromKernel.length !== canonical.length) throw new UserInputError(`${op} takes ${canonical.map((a) => a.name).join(', ')}; ${entry}() takes ${fromKernel.map((a) => a.name).join(', ')}: give --args to say which is which`, { code: 'init_args' });
      kernelArgs = canonical.map((c, i) => ({ ...c, name: fromKernel[i]!.name }) as InitArg);
    } else kernelArgs = resolveArgs({ fromKernel, given, dtypes, params, device, valueLater: true });
    const groups = (xs: InitArg[]) => ({
      input: xs.filter((a) => a.kind === 'tensor' && a.role === 'input'),
      output: xs.filter((a) => a.kind === 'tensor' && a.role === 'output'),
      scalar: xs.filter((a) => a.kind !== 'tensor' && a.kind !== 'stream'),
    });
    const want = groups(canonical);
    const have = groups(kernelArgs);
    const describe = (g: ReturnType<typeof groups>) => `${g.input.length} input tensor(s), ${g.output.length} output(s), ${g.scalar.length} scalar(s)`;
    if (want.input.length !== have.input.length || want.output.length !== have.output.length || want.scalar.length !== have.scalar.length) {
      throw new UserInputError(`${op} takes ${canonical.map((a) => a.name).join(', ')} (${describe(want)}); ${entry}() takes ${kernelArgs.map((a) => a.name).join(', ')} (${describe(have)}). Give --args to say which is which, or --reference with your own function.`, { code: 'init_args' });
    }
    if (device === 'cuda' && language !== 'triton' && !kernelArgs.some((a) => a.kind === 'stream')) throw new UserInputError(`${entry}() takes no cudaStream_t: a cuda task's entry launches on the harness's stream (add a last parameter cudaStream_t stream)`, { code: 'init_args' });
    args = kernelArgs.map((a: InitArg): InitArg => {
      const group = a.kind === 'tensor' ? (a.role === 'input' ? 'input' : 'output') : a.kind === 'stream' ? undefined : 'scalar';
      if (!group) return a;
      const twin = want[group][(have[group] as InitArg[]).indexOf(a)]!;
      names[twin.name] = a.name;
      if (a.kind === 'tensor' && twin.kind === 'tensor') return { ...a, shape: a.shape ?? twin.shape, dtype: dtypes.byName[a.name] ?? (language !== 'triton' ? a.dtype : (dtypes.all ?? a.dtype)) };
      if ('value' in twin && 'value' in a) return { ...a, kind: language === 'triton' ? twin.kind : a.kind, value: given?.find((g) => g.name === a.name)?.value ?? (params.includes(a.name) ? a.name : params.includes(twin.value) || !/^[A-Za-z_]/.test(twin.value) ? twin.value : a.name) } as InitArg;
      return a;
    });
  } else {
    args = resolveArgs({ fromKernel, given, dtypes, params, device });
  }
  const missingShape = args.filter((a) => a.kind === 'tensor' && !a.shape?.length);
  if (missingShape.length) throw new UserInputError(`give the shape of ${missingShape.map((a) => a.name).join(', ')} in --args, as expressions of ${params.join(', ')}: e.g. --args "${missingShape.map((a) => `${a.name}[${params.join(',')}]`).join(' ')}"`, { code: 'init_args' });
  for (const a of args) {
    for (const e of [...(a.shape ?? []), ...('value' in a ? [a.value] : [])]) {
      try {
        evaluateExpression(e, Object.fromEntries(params.map((p) => [p, 2])));
      } catch (error) {
        throw new UserInputError(`${a.name}: ${(error as Error).message}; expressions use the params ${params.join(', ')}`, { code: 'init_args' });
      }
    }
  }
  if (!args.some((a) => a.kind === 'tensor' && a.role === 'output')) throw new UserInputError(`${entry}() has no output: a tensor the kernel writes (a non-const pointer, or :out in --args)`, { code: 'init_args' });

  let reference: InitPlan['reference'];
  if (template) reference = { kind: 'op', op: op!, names };
  else {
    const m = /^(.+\.py):([A-Za-z_][A-Za-z0-9_]*)$/.exec(input.reference!);
    if (!m) throw new UserInputError(`--reference ${input.reference}: give <file.py>:<function>, e.g. ops.py:softmax_ref`, { code: 'init_reference' });
    const text = await readFile(m[1]!, 'utf8').catch(() => {
      throw new UserInputError(`--reference: ${m[1]} not found`, { code: 'init_reference' });
    });
    const fnParams = paramsOfPythonDef(text, m[2]!);
    if (!fnParams) throw new UserInputError(`--reference: ${m[1]} has no top-level def ${m[2]}(...)`, { code: 'init_reference' });
    reference = { kind: 'fn', file: path.basename(m[1]!), fn: m[2]!, text, fnParams };
  }

  const id = idTemplate(params);
  const ids = scenarioIds(id, shapes, list, params);
  const quick = [...new Set([ids.grid[0]!, ids.grid[ids.grid.length - 1]!, ...ids.list.slice(0, 1)])];
  const outputs = args.filter((a) => a.kind === 'tensor' && a.role === 'output').map((a) => (a as { dtype: string }).dtype);
  const floatDtype = args.find((a) => a.kind === 'tensor' && !a.dtype.startsWith('int')) as { dtype: string } | undefined;
  const eb = Object.fromEntries(args.filter((a) => a.kind === 'tensor').map((a) => [`eb_${Object.entries(names).find(([, n]) => n === a.name)?.[0] ?? a.name}`, { float32: 4, float16: 2, bfloat16: 2, int32: 4, int64: 8 }[(a as { dtype: string }).dtype]!]));
  const bytes = template ? template.bytes.replace(/eb_(\w+)/g, (m0) => String(eb[m0] ?? 4)) : bytesOf(args);
  const headers = input.headers ? input.headers.split(/[,\s]+/).filter(Boolean) : [];
  for (const h of headers) if (h !== 'cutlass') throw new UserInputError(`--headers ${h}: the set-up provides cutlass (CUTLASS and CuTe)`, { code: 'init_headers' });
  if (headers.length && language !== 'cuda') throw new UserInputError('--headers cutlass is for CUDA kernels', { code: 'init_headers' });
  const denylist = device === 'cpu' ? ['torch', 'c10', 'mkl', 'openblas', 'blas'] : ['torch', 'c10', ...(op === 'matmul' ? ['cublas', 'cublasLt'] : [])];

  const kernelFile = folder ? 'kernel/' : `kernel${language === 'triton' ? '.py' : path.extname(input.kernel) || (language === 'cuda' ? '.cu' : '.cpp')}`;
  const baselineName = folder ? 'baseline/' : `baseline${path.extname(kernelFile)}`;
  const plan: InitPlan = {
    name: input.name,
    summary: input.summary ?? (template ? template.summary(floatDtype?.dtype ?? 'float32') : `${reference.kind === 'fn' ? reference.fn : 'kernel'} (${language}), from ${path.basename(input.kernel)}.`),
    device,
    architectures: device === 'cuda' ? (input.arch ?? 'sm_90').split(',') : [],
    language,
    kernelFile,
    baseline: baselineName,
    entry,
    args,
    params,
    grid: shapes,
    list,
    id,
    quick,
    tolerance: toleranceFor(outputs),
    goal: parseGoal(input.goal),
    reference,
    peers: [{ name: 'torch', fn: 'peer_torch', why: template ? `PyTorch's ${op}` : `your ${reference.kind === 'fn' ? reference.fn : 'function'}() in PyTorch, eager` }, ...Object.keys((template as { peers?: object } | undefined)?.peers ?? {}).map((p) => ({ name: p, fn: `peer_${p}`, why: 'PyTorch, where this version has it' }))],
    metrics: { ...(template?.flops ? { flops: template.flops } : {}), ...(bytes ? { bytes } : {}) },
    denylist,
    includeDirs: input.includeDirs ? input.includeDirs.split(/[,\s]+/).filter(Boolean) : [],
    headers,
    origin: `from ${path.basename(input.kernel)}${folder ? '/' : ''} and ${template ? `the well-known ${op}` : `${reference.kind === 'fn' ? `${reference.file}:${reference.fn}` : ''}`}`,
  };
  const baseline = folder ? Object.fromEntries(Object.entries(sources).map(([rel, text]) => [`baseline/${rel}`, text])) : { [baselineName]: Object.values(sources)[0]! };
  return { plan, baseline };
}

/** Writes the task folder (refused when it exists, unless `force`): all or nothing. */
export async function writeTaskFolder(out: string, sources: InitSources, force = false): Promise<string> {
  const dir = path.join(out, sources.plan.name);
  const exists = await stat(dir).catch(() => undefined);
  if (exists && !force) throw new UserInputError(`${dir} already exists: choose another --name, another --out, or --force to replace it`, { code: 'init_exists' });
  const tmp = `${dir}.init-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  try {
    const files: Record<string, string> = { 'task.yaml': renderTaskYaml(sources.plan), 'reference.py': renderReferencePy(sources.plan), ...sources.baseline };
    for (const [rel, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(tmp, rel)), { recursive: true });
      await writeFile(path.join(tmp, rel), text);
    }
    if (exists) await rm(dir, { recursive: true, force: true });
    await mkdir(out, { recursive: true });
    await rename(tmp, dir);
  } catch (error) {
    await rm(tmp, { recursive: true, force: true });
    throw error;
  }
  return dir;
}
