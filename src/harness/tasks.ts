import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { isMap, isSeq, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import { UserInputError } from '../core/errors.js';
import { isPythonBaseline, kernelIncludes, kernelLayout, type KernelLayout } from './candidate.js';
import { evaluateExpression } from './expression.js';
import { closestNames } from './names.js';
import { validateTask, type Task } from './task-schema.js';

/** One problem in one task file, precise enough to fix without reading our code. */
export interface TaskProblem {
  file: string;
  /** Dotted path to the field at fault (`scenarios.grid[0].rows`), empty for the whole file. */
  field: string;
  line: number | undefined;
  message: string;
}

export interface Scenario {
  id: string;
  params: Record<string, number | string | boolean>;
}

export interface LoadedTask {
  task: Task;
  /** The candidate's shape: one file or a folder, and its language. */
  layout: KernelLayout;
  dir: string;
  file: string;
  scenarios: Scenario[];
  quick: Scenario[];
}

export interface TaskCatalog {
  tasks: LoadedTask[];
  problems: TaskProblem[];
}

export function formatPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const s of segments) out += typeof s === 'number' ? `[${s}]` : out ? `.${String(s)}` : String(s);
  return out;
}

/** The line of the YAML node at `segments`, or of its closest ancestor that exists. */
export function lineOf(root: YamlNode | null, segments: readonly PropertyKey[], counter: LineCounter): number | undefined {
  let node: unknown = root;
  let best: number | undefined = root?.range ? counter.linePos(root.range[0]).line : undefined;
  for (const seg of segments) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === seg);
      if (!pair) break;
      const keyNode = pair.key as YamlNode | null;
      if (keyNode?.range) best = counter.linePos(keyNode.range[0]).line;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      node = node.items[seg];
      const n = node as YamlNode | undefined;
      if (n?.range) best = counter.linePos(n.range[0]).line;
    } else break;
  }
  return best;
}

/** Expands a task's grid and list into scenarios with unique ids. */
export function expandScenarios(task: Task): Scenario[] {
  const out: Scenario[] = [];
  const { params, grid, list, id } = task.scenarios;
  const makeId = (p: Scenario['params']) =>
    id.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      if (!(name in p)) throw new Error(`scenarios.id uses {${name}}, which is not a parameter`);
      return String(p[name]);
    });
  grid.forEach((block, b) => {
    const missing = params.filter((p) => !(p in block));
    if (missing.length) throw new Error(`scenarios.grid[${b}] gives no values for ${missing.join(', ')}`);
    let combos: Scenario['params'][] = [{}];
    for (const p of params) {
      const value = block[p] as number | string | boolean | (number | string | boolean)[];
      const values = Array.isArray(value) ? value : [value];
      combos = combos.flatMap((c) => values.map((v) => ({ ...c, [p]: v })));
    }
    for (const combo of combos) {
      if (block.where && !evaluateExpression(block.where, combo as Record<string, number | boolean>)) continue;
      out.push({ id: makeId(combo), params: combo });
    }
  });
  list.forEach((item, i) => {
    const missing = params.filter((p) => !(p in item));
    if (missing.length) throw new Error(`scenarios.list[${i}] gives no values for ${missing.join(', ')}`);
    out.push({ id: makeId(item), params: item });
  });
  const seen = new Set<string>();
  for (const s of out) {
    if (seen.has(s.id)) throw new Error(`scenario id '${s.id}' appears twice; make scenarios.id distinguish every parameter`);
    seen.add(s.id);
  }
  return out;
}

/** Reads and validates one task.yaml. */
export async function loadTask(file: string): Promise<{ task?: LoadedTask; problems: TaskProblem[] }> {
  const rel = path.relative(process.cwd(), file) || file;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { problems: [{ file: rel, field: '', line: undefined, message: `cannot read: ${(error as Error).message}` }] };
  }
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter });
  if (doc.errors.length > 0) {
    return {
      problems: doc.errors.map((e) => ({
        file: rel,
        field: '',
        line: e.linePos?.[0]?.line,
        message: `invalid YAML: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
      })),
    };
  }
  const parsed = validateTask(doc.toJS());
  if (!parsed.task) {
    return {
      problems: parsed.issues.map((issue) => ({
        file: rel,
        field: formatPath(issue.path),
        line: lineOf(doc.contents as YamlNode | null, issue.path, counter),
        message: issue.message,
      })),
    };
  }
  const task = parsed.task;
  const dir = path.dirname(file);
  const problems: TaskProblem[] = [];
  if (task.name !== path.basename(dir)) {
    problems.push({ file: rel, field: 'name', line: lineOf(doc.contents as YamlNode, ['name'], counter), message: `must equal the folder name '${path.basename(dir)}'` });
  }
  const layout = kernelLayout(task);
  const at = (...segments: PropertyKey[]) => lineOf(doc.contents as YamlNode, segments, counter);
  for (const p of await layoutProblems(task, dir, layout)) problems.push({ file: rel, field: formatPath(p.at), line: at(...p.at), message: p.message });
  // The harness imports reference.py for inputs, the reference result and the peers: without it no
  // evaluation can run, so a folder without one is not a task (harness/task/model.py refuses it too).
  const reference = await stat(path.join(dir, 'reference.py')).catch(() => undefined);
  if (!reference?.isFile()) {
    problems.push({ file: rel, field: '', line: undefined, message: `${path.join(path.relative(process.cwd(), dir) || dir, 'reference.py')} not found: a task folder needs reference.py next to task.yaml (make_inputs, output_shapes, reference, lowp and the peers; see docs/tasks.md)` });
  }
  let scenarios: Scenario[] = [];
  try {
    scenarios = expandScenarios(task);
  } catch (error) {
    problems.push({ file: rel, field: 'scenarios', line: lineOf(doc.contents as YamlNode, ['scenarios'], counter), message: (error as Error).message });
  }
  const byId = new Map(scenarios.map((s) => [s.id, s]));
  const unknownQuick = task.scenarios.quick.filter((q) => !byId.has(q));
  if (scenarios.length > 0 && unknownQuick.length > 0) {
    problems.push({ file: rel, field: 'scenarios.quick', line: lineOf(doc.contents as YamlNode, ['scenarios', 'quick'], counter), message: `unknown scenario ids: ${unknownQuick.join(', ')}` });
  }
  if (problems.length > 0) return { problems };
  const quick = task.scenarios.quick.map((q) => byId.get(q)!);
  return { task: { task, layout, dir, file, scenarios, quick }, problems: [] };
}

/** Within the task folder: a relative path without `..` that does not leave it. */
function insideTask(dir: string, rel: string): boolean {
  const full = path.resolve(dir, rel);
  return !path.isAbsolute(rel) && (full === dir || full.startsWith(dir + path.sep));
}

/** The file of a `python:` callable (`ops.py:fn` or `python:ops.py:fn`), or undefined for a module. */
export function pythonCallableFile(ref: string): { file?: string; module?: string; fn: string } {
  const body = ref.replace(/^python:/, '');
  const cut = body.lastIndexOf(':');
  const target = body.slice(0, cut);
  const fn = body.slice(cut + 1);
  return target.endsWith('.py') || target.includes('/') ? { file: target, fn } : { module: target, fn };
}

/**
 * The files task.yaml names exist, each of the right kind: the baseline (a file, a folder for a folder
 * kernel, or a Python callable), the include folders, the Python peers' files.
 */
async function layoutProblems(task: Task, dir: string, layout: KernelLayout): Promise<{ at: (string | number)[]; message: string }[]> {
  const out: { at: (string | number)[]; message: string }[] = [];
  const kind = async (rel: string) => {
    if (!insideTask(dir, rel)) return 'outside' as const;
    const st = await stat(path.join(dir, rel)).catch(() => undefined);
    return st?.isDirectory() ? ('folder' as const) : st?.isFile() ? ('file' as const) : ('missing' as const);
  };
  const baseline = task.kernel.baseline;
  if (isPythonBaseline(baseline)) {
    const ref = pythonCallableFile(baseline);
    if (!/^python:[^:]+:[A-Za-z_][A-Za-z0-9_]*$/.test(baseline)) out.push({ at: ['kernel', 'baseline'], message: `'${baseline}' must be python:<file.py or module>:<function>` });
    else if (ref.file && (await kind(ref.file)) !== 'file') out.push({ at: ['kernel', 'baseline'], message: `${ref.file} (the baseline's Python file) not found in the task folder` });
  } else {
    const k = await kind(baseline);
    if (k === 'outside') out.push({ at: ['kernel', 'baseline'], message: `${baseline} must be inside the task folder` });
    else if (k === 'missing') out.push({ at: ['kernel', 'baseline'], message: `${layout.folder ? 'folder' : 'file'} ${baseline} not found next to task.yaml` });
    else if (layout.folder && k !== 'folder') out.push({ at: ['kernel', 'baseline'], message: `${baseline} is a file, but kernel.file '${task.kernel.file}' is a folder: make the baseline a folder of sources, or name one file (kernel${layout.language === 'cuda' ? '.cu' : layout.language === 'triton' ? '.py' : '.cpp'})` });
    else if (!layout.folder && k !== 'file') out.push({ at: ['kernel', 'baseline'], message: `${baseline} is a folder, but kernel.file '${task.kernel.file}' is one file: name the folder kernel.file: ${layout.name.replace(/\.[a-z]+$/, '')}/` });
  }
  // The task's own header folders (the candidate folder's root is on the include path anyway).
  for (const [i, inc] of kernelIncludes(task).includeDirs.entries()) {
    const k = await kind(inc);
    if (k === 'outside') out.push({ at: ['kernel', 'include_dirs', i], message: `${inc} must be a folder inside the task folder` });
    else if (k !== 'folder') out.push({ at: ['kernel', 'include_dirs', i], message: `folder ${inc} not found in the task folder` });
  }
  for (const [i, peer] of task.peers.entries()) {
    if (peer.python === undefined) continue;
    const ref = pythonCallableFile(peer.python);
    if (ref.file && (await kind(ref.file)) !== 'file') out.push({ at: ['peers', i, 'python'], message: `${ref.file} not found in the task folder` });
  }
  return out;
}

/**
 * Loads every `kernels/<task>/task.yaml`. A broken file is reported with its path and the field at
 * fault; it never hides the valid tasks.
 */
export async function loadTaskCatalog(kernelsDir: string): Promise<TaskCatalog> {
  let entries: string[];
  try {
    entries = (await readdir(kernelsDir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it does not exist' : (error as NodeJS.ErrnoException).code === 'ENOTDIR' ? 'it is not a folder' : (error as Error).message;
    return {
      tasks: [],
      problems: [{ file: kernelsDir, field: '', line: undefined, message: `cannot read the tasks folder (${reason}): point KERNELSEEK_TASKS_DIR at the folder that holds <task>/task.yaml, or unset it for kernels/ in this checkout` }],
    };
  }
  const results = await Promise.all(
    entries.map(async (name) => {
      const file = path.join(kernelsDir, name, 'task.yaml');
      try {
        await stat(file);
      } catch {
        return undefined; // not a task folder
      }
      return loadTask(file);
    }),
  );
  const catalog: TaskCatalog = { tasks: [], problems: [] };
  for (const r of results) {
    if (!r) continue;
    if (r.task) catalog.tasks.push(r.task);
    catalog.problems.push(...r.problems);
  }
  return catalog;
}

/** Finds one task by name, with an error that lists the valid names. */
export async function findTask(kernelsDir: string, name: string): Promise<LoadedTask> {
  const catalog = await loadTaskCatalog(kernelsDir);
  const hit = catalog.tasks.find((t) => t.task.name === name);
  if (hit) return hit;
  const broken = catalog.problems.filter((p) => p.file.includes(`${path.sep}${name}${path.sep}`));
  if (broken.length > 0) {
    throw new UserInputError(`Task '${name}' is invalid:\n${broken.map(formatProblem).join('\n')}`, { code: 'task_invalid' });
  }
  const unreadable = catalog.problems.find((p) => p.file === kernelsDir);
  if (unreadable) throw new UserInputError(`Task '${name}' cannot be looked up: ${kernelsDir}: ${unreadable.message}.`, { code: 'tasks_dir' });
  const all = catalog.tasks.map((t) => t.task.name);
  const guess = closestNames(name, all)[0];
  throw new UserInputError(`Unknown task '${name}'.${guess ? ` Did you mean '${guess}'?` : ''} Available tasks: ${all.join(', ') || '(none)'}.`, { code: 'task_unknown' });
}

export function formatProblem(p: TaskProblem): string {
  const where = `${p.file}${p.line ? `:${p.line}` : ''}`;
  return `${where}: ${p.field ? `${p.field}: ` : ''}${p.message}`;
}
