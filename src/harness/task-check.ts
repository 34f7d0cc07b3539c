import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import { readBaselineFigures } from './baseline-figures.js';
import { checkCEntry } from './c-signature.js';
import type { CheckProblem } from './check-problem.js';
import { defaultLanguage, isPythonBaseline, kernelLayout, readCandidateFolder, SOURCE_EXTENSIONS } from './candidate.js';
import { evaluateExpression } from './expression.js';
import { runHarnessCheck, type HarnessCheckOptions } from './harness-check.js';
import { closestNames } from './names.js';
import { probePythonFiles, type ProbeRequest } from './python-probe.js';
import { DTYPES, type TaskArg } from './task-schema.js';
import { lineOf, loadTask, pythonCallableFile, type LoadedTask, type TaskProblem } from './tasks.js';

/**
 * The strict check of a task folder (`kernelseek tasks --check`, and before every run): every
 * problem at once, each with its file, line and a fix. It reads task.yaml (schema, expressions,
 * names), reference.py and the Python callables (parsed, not run: python-probe.ts), the baseline's
 * entry point against `kernel.args` (c-signature.ts), the tolerance and the goal; then, where asked,
 * it adds what the harness's own `check-task --json` finds by importing and running the reference.
 */

export type { CheckProblem };

export interface TaskCheck {
  dir: string;
  name: string;
  task?: LoadedTask;
  problems: CheckProblem[];
  /** What could not be checked, and why (no python3, a harness without check-task --json). */
  notes: string[];
}

export interface CheckOptions {
  /** Names of the other tasks where this one will live (a near name is a warning). */
  otherNames?: string[];
  /** A python3 to parse the Python files with (stdlib only); undefined skips that part, with a note. */
  python?: string;
  env?: Record<string, string>;
  /** Where the baseline's last figures are kept (baseline-figures.ts). */
  dataDir?: string;
  /** Also run the harness's check-task --json (imports torch: seconds, not milliseconds). */
  harness?: HarnessCheckOptions;
}

const ALIASES: Record<string, string> = { f32: 'float32', fp32: 'float32', float: 'float32', single: 'float32', f16: 'float16', fp16: 'float16', half: 'float16', bf16: 'bfloat16', brain_float16: 'bfloat16', i32: 'int32', int: 'int32', i64: 'int64', long: 'int64', f64: 'float64', double: 'float64', fp64: 'float64' };
const EXPRESSION_HELP = "use the scenario's params, numbers, + - * / // % **, comparisons, and/or/not, `a if c else b` and math functions (sqrt, log2, ceil, min, max, ...)";

/** A fix for a problem of task.yaml the loader found, by its field and message. */
export function fixFor(p: Pick<TaskProblem, 'field' | 'message'>, context: { params?: string[]; ids?: string[] } = {}): string {
  const { field, message } = p;
  if (message.startsWith('invalid YAML')) return 'fix the YAML at that line: indentation, an unclosed bracket or quote, a tab';
  const enumHit = /^'([^']*)' is not one of (.*)$/.exec(message);
  if (enumHit) {
    const [, value, allowed] = enumHit;
    const options = allowed!.split(', ');
    const alias = ALIASES[value!.toLowerCase()];
    const guess = alias && options.includes(alias) ? alias : closestNames(value!, options)[0];
    if (field.endsWith('.dtype') && alias === 'float64') return `the harness has no float64 tensors: use float32 (and compute the reference in float64 in reference.py)`;
    return guess ? `did you mean ${guess}? (one of ${allowed})` : `use one of ${allowed}`;
  }
  if (message === 'is required') return `add ${field} (docs/tasks.md, task.yaml field by field)`;
  if (field === 'name') return 'rename the folder, or set name: to the folder name';
  if (field === 'scenarios.quick') {
    const unknown = message.replace(/^unknown scenario ids: /, '').split(', ');
    const guesses = unknown.map((u) => closestNames(u, context.ids ?? [])[0]).filter(Boolean);
    return guesses.length ? `did you mean ${guesses.join(', ')}? (python3 -m harness scenarios --task-dir <task> lists the ids)` : 'use ids that `python3 -m harness scenarios --task-dir <task>` lists';
  }
  if (message.includes('cannot evaluate')) return EXPRESSION_HELP + (context.params?.length ? ` (params: ${context.params.join(', ')})` : '');
  if (field.startsWith('kernel.baseline')) return 'point kernel.baseline at the baseline inside the task folder (a file, a folder for a folder kernel, or python:<file.py>:<function>)';
  if (field.startsWith('kernel.include_dirs')) return 'create the folder, or drop it from kernel.include_dirs';
  if (field === 'kernel.language') return 'cpu tasks: cpp or triton; cuda tasks: cuda or triton (or leave language out: it follows the file extension)';
  if (message.includes('reference.py not found')) return 'add reference.py (make_inputs, output_shapes, reference, lowp, the peers): `kernelseek task init` writes one';
  return `see docs/tasks.md (${field || 'the file'})`;
}

/** A loose view of task.yaml when the schema refused it: the parts other checks can still use. */
function looseKernel(raw: Record<string, unknown>): { entry?: string; args?: TaskArg[]; baseline?: string; file?: string; device: 'cpu' | 'cuda'; language?: string } {
  const k = (raw.kernel ?? {}) as Record<string, unknown>;
  const device = raw.device === 'cuda' ? 'cuda' : 'cpu';
  const args = Array.isArray(k.args) && k.args.every((a) => a && typeof a === 'object' && typeof (a as TaskArg).name === 'string' && typeof (a as TaskArg).kind === 'string') ? (k.args as TaskArg[]) : undefined;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const file = str(k.file);
  return { entry: str(k.entry), args, baseline: str(k.baseline), file, device, language: str(k.language) ?? (file ? defaultLanguage(file, device) : undefined) };
}

async function exists(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined)) !== undefined;
}

/** Expressions of args and metrics, on every scenario (a name that is not a param fails on the first). */
function expressionProblems(loaded: LoadedTask, rel: string, at: (...s: PropertyKey[]) => number | undefined): CheckProblem[] {
  const out: CheckProblem[] = [];
  const { task, scenarios } = loaded;
  const exprs: { segments: PropertyKey[]; text: string }[] = [];
  task.kernel.args.forEach((a, i) => {
    if ('value' in a) exprs.push({ segments: ['kernel', 'args', i, 'value'], text: a.value });
  });
  for (const key of ['flops', 'bytes'] as const) if (task.metrics[key] !== undefined) exprs.push({ segments: ['metrics', key], text: task.metrics[key] });
  for (const e of exprs) {
    for (const s of scenarios) {
      try {
        const v = evaluateExpression(e.text, s.params as Record<string, number | boolean>);
        if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(`cannot evaluate "${e.text}": not finite on scenario ${s.id}`);
      } catch (error) {
        const field = e.segments.map((x) => (typeof x === 'number' ? `[${x}]` : `.${String(x)}`)).join('').replace(/^\./, '');
        out.push({ severity: 'error', file: rel, line: at(...e.segments), field, message: `${(error as Error).message} (scenario ${s.id})`, fix: `${EXPRESSION_HELP} (params: ${task.scenarios.params.join(', ')})` });
        break;
      }
    }
  }
  return out;
}

/**
 * When the schema refused task.yaml the scenarios cannot be expanded, but each expression can still
 * be read: its syntax and the names it uses (every param set to 1; an arithmetic error there is not
 * the expression's fault and is left out).
 */
function rawExpressionProblems(raw: Record<string, unknown>, params: string[], rel: string, at: (...s: PropertyKey[]) => number | undefined): CheckProblem[] {
  const exprs: { segments: (string | number)[]; text: unknown }[] = [];
  const grid = (raw.scenarios as { grid?: unknown } | undefined)?.grid;
  if (Array.isArray(grid)) grid.forEach((b, i) => exprs.push({ segments: ['scenarios', 'grid', i, 'where'], text: (b as { where?: unknown } | null)?.where }));
  const args = (raw.kernel as { args?: unknown } | undefined)?.args;
  if (Array.isArray(args)) args.forEach((a, i) => exprs.push({ segments: ['kernel', 'args', i, 'value'], text: (a as { value?: unknown } | null)?.value }));
  const metrics = raw.metrics as Record<string, unknown> | undefined;
  for (const key of ['flops', 'bytes']) exprs.push({ segments: ['metrics', key], text: metrics?.[key] });
  const vars = Object.fromEntries(params.map((p) => [p, 1]));
  const out: CheckProblem[] = [];
  for (const e of exprs) {
    if (typeof e.text !== 'string' && typeof e.text !== 'number') continue;
    try {
      evaluateExpression(String(e.text), vars);
    } catch (error) {
      const message = (error as Error).message;
      if (/division by zero/.test(message)) continue;
      const field = e.segments.map((x) => (typeof x === 'number' ? `[${x}]` : `.${x}`)).join('').replace(/^\./, '');
      out.push({ severity: 'error', file: rel, line: at(...e.segments), field, message, fix: `${EXPRESSION_HELP}${params.length ? ` (params: ${params.join(', ')})` : ''}` });
    }
  }
  return out;
}

function toleranceProblems(loaded: LoadedTask, rel: string, at: (...s: PropertyKey[]) => number | undefined): CheckProblem[] {
  const { factor, atol } = loaded.task.tolerance;
  const out: CheckProblem[] = [];
  const floatOut = loaded.task.kernel.args.some((a) => a.kind === 'tensor' && a.role === 'output' && a.dtype.startsWith('f') || (a.kind === 'tensor' && a.role === 'output' && a.dtype === 'bfloat16'));
  if (factor < 1) {
    out.push({ severity: 'warning', file: rel, line: at('tolerance', 'factor'), field: 'tolerance.factor', message: `${factor} asks the candidate to be more accurate than PyTorch in the output's precision (lowp itself would fail)`, fix: 'use a factor of 1 or more (2 is usual): the error allowed is factor × max|lowp − reference| + atol' });
  } else if (factor > 100) {
    out.push({ severity: 'warning', file: rel, line: at('tolerance', 'factor'), field: 'tolerance.factor', message: `${factor} is so loose that a wrong kernel may pass`, fix: 'use a factor between 1 and 10 (2 is usual); raise it only where the reference shows why' });
  }
  if (floatOut && atol > 1e-2) {
    out.push({ severity: 'warning', file: rel, line: at('tolerance', 'atol'), field: 'tolerance.atol', message: `atol ${atol} allows errors as large as typical outputs of a normalised kernel`, fix: 'keep atol a floor for values near zero (1e-6 for float32, 1e-3 for bf16/fp16)' });
  }
  return out;
}

async function goalProblems(loaded: LoadedTask, rel: string, at: (...s: PropertyKey[]) => number | undefined, dataDir: string | undefined): Promise<CheckProblem[]> {
  const { goal } = loaded.task;
  if (goal.vs === 'baseline' && goal.speedup <= 1) {
    return [{ severity: 'warning', file: rel, line: at('goal'), field: 'goal.speedup', message: `a goal of ${goal.speedup}x vs the baseline is met by the baseline itself`, fix: 'set goal.speedup above 1 (e.g. 1.2), or goal.vs: best_peer' }];
  }
  if (goal.vs !== 'best_peer' || !dataDir) return [];
  const figures = await readBaselineFigures(dataDir, loaded);
  if (!figures) return [];
  const peers = Object.entries(figures.vsPeer).filter(([p]) => loaded.task.peers.some((q) => q.name === p));
  if (peers.length === 0) return [];
  const [bestPeer, x] = peers.reduce((a, b) => (b[1] < a[1] ? b : a));
  if (x < goal.speedup) return [];
  return [
    {
      severity: 'warning',
      file: rel,
      line: at('goal'),
      field: 'goal.speedup',
      message: `the baseline already meets the goal: it is ${x.toFixed(2)}x the fastest peer (${bestPeer}) over ${figures.scenarios} scenario(s), measured ${figures.recordedAt.slice(0, 10)} on ${figures.gpu ?? figures.device}`,
      fix: `raise goal.speedup above ${x.toFixed(2)}, or add a stronger peer`,
    },
  ];
}

/** reference.py's contract, the Python peers and baseline, a Triton entry: what the probe must find. */
function probeRequest(dir: string, raw: Record<string, unknown>, kernel: ReturnType<typeof looseKernel>): ProbeRequest {
  const req: ProbeRequest = { taskDir: dir, functions: [], modules: [] };
  const ref = (name: string, args: number, call: string) => req.functions.push({ file: 'reference.py', name, args, field: '', call });
  ref('make_inputs', 3, 'make_inputs(scenario, seed, device)');
  ref('output_shapes', 1, 'output_shapes(scenario)');
  ref('reference', 2, 'reference(inputs, scenario)');
  ref('lowp', 2, 'lowp(inputs, scenario)');
  const callable = (value: string, field: string, args: number, call: (fn: string) => string, triton = false) => {
    const r = pythonCallableFile(value);
    if (r.file) req.functions.push({ file: r.file, name: r.fn, args, field, call: call(r.fn), ...(triton ? { triton } : {}) });
    else if (r.module) req.modules.push({ module: r.module, name: r.fn, field });
  };
  // A Python peer or baseline, like a Triton entry, takes the task's arguments in order (no stream).
  const names = kernel.args?.filter((a) => a.kind !== 'stream').map((a) => a.name);
  const peers = Array.isArray(raw.peers) ? (raw.peers as Record<string, unknown>[]) : [];
  peers.forEach((p, i) => {
    if (typeof p?.fn === 'string') req.functions.push({ file: 'reference.py', name: p.fn, args: 2, field: `peers[${i}].fn`, call: `${p.fn}(inputs, scenario)` });
    if (typeof p?.python === 'string' && names) callable(p.python, `peers[${i}].python`, names.length, (fn) => `${fn}(${names.join(', ')})`);
  });
  if (kernel.baseline && isPythonBaseline(kernel.baseline)) {
    if (names) callable(kernel.baseline, 'kernel.baseline', names.length, (fn) => `${fn}(${names.join(', ')})`);
  } else if (kernel.language === 'triton' && kernel.baseline && kernel.entry && names) {
    req.functions.push({ file: kernel.baseline, name: kernel.entry, args: names.length, field: 'kernel.entry', call: `${kernel.entry}(${names.join(', ')})`, triton: true });
  }
  return req;
}

/** The baseline's C/C++/CUDA sources: the file, or every source and header of the folder. */
async function baselineSources(dir: string, baseline: string, folder: boolean): Promise<Record<string, string> | undefined> {
  const full = path.join(dir, baseline);
  if (!(await exists(full))) return undefined;
  if (!folder) return { [baseline]: await readFile(full, 'utf8') };
  const files = await readCandidateFolder(full).catch(() => undefined);
  return files && Object.fromEntries(Object.entries(files).filter(([n]) => !n.endsWith('.py')).map(([n, t]) => [path.join(baseline, n), t]));
}

/** Every problem of one task folder (see the module's comment). */
export async function checkTaskFolder(dirIn: string, options: CheckOptions = {}): Promise<TaskCheck> {
  const dir = path.resolve(dirIn);
  const file = path.join(dir, 'task.yaml');
  const rel = path.relative(process.cwd(), file) || file;
  const relOf = (name: string) => path.relative(process.cwd(), path.join(dir, name)) || name;
  const check: TaskCheck = { dir, name: path.basename(dir), problems: [], notes: [] };
  const loaded = await loadTask(file);
  let ids: string[] = [];
  let params: string[] = [];
  let raw: Record<string, unknown> = {};
  const counter = new LineCounter();
  let root: YamlNode | null = null;
  try {
    const doc = parseDocument(await readFile(file, 'utf8'), { lineCounter: counter });
    root = doc.contents as YamlNode | null;
    if (doc.errors.length === 0) raw = (doc.toJS() ?? {}) as Record<string, unknown>;
  } catch {
    // loadTask said why
  }
  const at = (...segments: PropertyKey[]) => lineOf(root, segments, counter);
  if (loaded.task) {
    check.task = loaded.task;
    check.name = loaded.task.task.name;
    ids = loaded.task.scenarios.map((s) => s.id);
    params = loaded.task.task.scenarios.params;
  } else if (raw.scenarios && Array.isArray((raw.scenarios as { params?: unknown }).params)) params = (raw.scenarios as { params: string[] }).params;
  for (const p of loaded.problems) check.problems.push({ severity: 'error', file: p.file, ...(p.line ? { line: p.line } : {}), ...(p.field ? { field: p.field } : {}), message: p.message, fix: fixFor(p, { params, ids }) });

  if (loaded.task) {
    check.problems.push(...expressionProblems(loaded.task, rel, at), ...toleranceProblems(loaded.task, rel, at), ...(await goalProblems(loaded.task, rel, at, options.dataDir)));
  } else check.problems.push(...rawExpressionProblems(raw, params, rel, at).filter((p) => !check.problems.some((q) => q.field === p.field)));
  const name = typeof raw.name === 'string' ? raw.name : check.name;
  const near = closestNames(name, (options.otherNames ?? []).filter((n) => n !== name));
  if (near.length > 0) {
    check.problems.push({ severity: 'warning', file: rel, line: at('name'), field: 'name', message: `'${name}' is close to the task '${near[0]}': did you mean that one?`, fix: `if this is a new task, give it a name further from ${near.join(', ')} (a near name is easy to start by mistake)` });
  }

  // The baseline's entry point against kernel.args: C, C++ and CUDA here; Triton in the probe.
  const kernel = looseKernel(raw);
  if (kernel.entry && kernel.args && kernel.baseline && !isPythonBaseline(kernel.baseline) && kernel.language !== 'triton' && kernel.file) {
    const folder = kernelLayout({ kernel: { file: kernel.file, language: 'cpp' } } as Parameters<typeof kernelLayout>[0]).folder;
    const sources = await baselineSources(dir, kernel.baseline, folder);
    if (sources) {
      const wanted = SOURCE_EXTENSIONS[kernel.language === 'cuda' ? 'cuda' : 'cpp'];
      if (folder && !Object.keys(sources).some((n) => wanted.some((e) => n.endsWith(e)))) {
        check.problems.push({ severity: 'error', file: relOf(kernel.baseline), field: 'kernel.baseline', message: `the baseline folder has no ${kernel.language} source (${wanted.join(' ')})`, fix: 'put the kernel\'s sources in the folder' });
      } else {
        for (const f of checkCEntry(sources, kernel.entry, kernel.args)) {
          check.problems.push({ severity: f.severity, file: f.file ? relOf(f.file) : relOf(kernel.baseline), ...(f.line ? { line: f.line } : {}), field: f.field, message: f.message, fix: f.fix });
        }
      }
    }
  }

  if (options.python) {
    const found = await probePythonFiles(options.python, probeRequest(dir, raw, kernel), options.env ?? {});
    if (found) for (const f of found) check.problems.push({ ...f, file: f.file === 'task.yaml' ? rel : relOf(f.file), ...(f.field && !f.line && f.file === 'task.yaml' ? { line: at(...f.field.split(/[.[\]]/).filter(Boolean).map((s) => (/^\d+$/.test(s) ? Number(s) : s))) } : {}) });
    else check.notes.push(`${options.python} could not parse the Python files: reference.py and the Python callables were not checked here`);
  } else check.notes.push('no python3 here: reference.py and the Python callables were not checked');

  if (options.harness) {
    const h = await runHarnessCheck(dir, options.harness);
    if (h.note) check.notes.push(h.note);
    for (const p of h.problems) {
      const pfile = path.isAbsolute(p.file) ? path.relative(process.cwd(), p.file) : relOf(p.file);
      // The same file and field already reported here: the harness's wording is left out.
      if (check.problems.some((q) => path.basename(q.file) === path.basename(pfile) && (q.field ?? '') === (p.field ?? '') && (q.line === p.line || !p.line || !q.line))) continue;
      check.problems.push({ ...p, file: pfile });
    }
  }
  check.problems.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === 'error' ? -1 : 1));
  return check;
}

export function formatCheckProblem(p: CheckProblem): string {
  return `${p.severity === 'warning' ? 'warning: ' : ''}${p.file}${p.line ? `:${p.line}` : ''}: ${p.field ? `${p.field}: ` : ''}${p.message}\n    fix: ${p.fix}`;
}

/** Known dtypes, for init and the fixes. */
export { DTYPES };
