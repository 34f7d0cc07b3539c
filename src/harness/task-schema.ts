import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';

/**
 * The task format (`kernels/<task>/task.yaml`, schema `kernelseek.task/1`, docs/tasks.md). Its shape
 * is declared once, in harness/schema/task.schema.json: this file validates it with ajv, and the
 * Python harness (harness/task/schema.py) checks the same file, so the CLI, Slack and the harness
 * accept the same tasks. The checks a schema cannot express are in crossFieldProblems below (and
 * loadTask for the ones that need the folder); harness/task/model.py makes the same ones.
 */

export const TASK_SCHEMA_FILE = new URL('../../harness/schema/task.schema.json', import.meta.url);
const schema = JSON.parse(readFileSync(TASK_SCHEMA_FILE, 'utf8')) as Record<string, unknown>;
export const DTYPES = (schema.definitions as { arg: { properties: { dtype: { enum: string[] } } } }).arg.properties.dtype.enum;

export type TaskArg =
  | { name: string; kind: 'tensor'; dtype: string; role: 'input' | 'output' }
  | { name: string; kind: 'int32' | 'int64' | 'float32'; value: string }
  | { name: string; kind: 'stream' };

type ScenarioValue = number | string | boolean;

export interface Task {
  schema: 'kernelseek.task/1';
  name: string;
  summary: string;
  device: 'cpu' | 'cuda';
  architectures: string[];
  kernel: { language: 'cpp' | 'cuda' | 'triton'; file: string; baseline: string; entry: string; args: TaskArg[]; compile: { flags: string[] }; [key: string]: unknown };
  /** A grid value is a list of values, or one value (a list of one). */
  scenarios: { params: string[]; grid: ({ where?: string } & Record<string, ScenarioValue[] | ScenarioValue | undefined>)[]; list: Record<string, ScenarioValue>[]; id: string; quick: string[] };
  tolerance: { rule: 'lowp_relative'; factor: number; atol: number };
  /** Without them, no TFLOP/s, GB/s or % of peak is reported. */
  metrics: { flops?: string; bytes?: string };
  peak: { tflops?: number; gbps?: number };
  peers: { name: string; fn?: string; python?: string }[];
  goal: { vs: 'best_peer' | 'baseline'; speedup: number };
  plausibility: { max_speedup_vs_baseline?: number; max_pct_of_peak?: number };
  denylist: string[];
  timing: Record<string, number>;
  cpu_threads?: number;
  /**
   * Where the kernel lives in the team's repository: `kernelseek pr` and Slack's *Open pull request*
   * write it there (`path`: a file, or a folder ending in `/`) on a new branch off `base`; `evidence`:
   * commit the evidence (Markdown, JSON, chart) beside it too.
   */
  upstream?: { repo: string; path: string; base?: string; evidence?: boolean };
  [key: string]: unknown;
}

export interface TaskIssue {
  path: (string | number)[];
  message: string;
}

// allErrors: every problem at once; useDefaults: the schema's defaults fill what a task leaves out;
// x-message is the schema's own wording for a failed pattern (the harness shows it too).
const ajv = new Ajv({ allErrors: true, useDefaults: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' });
const validate = ajv.compile(schema);

/** A value as Python's repr shows it, so both sides word a message the same. */
const repr = (v: unknown) => (typeof v === 'string' ? `'${v}'` : JSON.stringify(v));
const TYPE_NAMES: Record<string, string> = { object: 'a mapping', array: 'a list', string: 'a string', boolean: 'a boolean', integer: 'an integer', number: 'a number', null: 'null' };

function issueOf(e: ErrorObject): TaskIssue | undefined {
  const path = e.instancePath.split('/').slice(1).map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')));
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'if':
      return undefined; // the `then` branch's own error says what is wrong
    case 'required':
      return { path: [...path, String(p.missingProperty)], message: 'is required' };
    case 'type': {
      const names = ([] as string[]).concat(p.type as string | string[]).map((t) => TYPE_NAMES[t] ?? t);
      return { path, message: `expected ${names.join(' or ')}, got ${typeof e.data === 'boolean' ? 'a boolean' : repr(e.data)}` };
    }
    case 'const':
      return { path, message: `expected ${repr(p.allowedValue)}, got ${repr(e.data)}` };
    case 'enum':
      return { path, message: `${repr(e.data)} is not one of ${(p.allowedValues as unknown[]).join(', ')}` };
    case 'pattern':
      return { path, message: `${repr(e.data)} ${(e.parentSchema as Record<string, string>)['x-message'] ?? `does not match ${String(p.pattern)}`}` };
    case 'minLength':
      return { path, message: 'must not be empty' };
    case 'minItems':
      return { path, message: `needs at least ${String(p.limit)} item(s)` };
    case 'exclusiveMinimum':
      return { path, message: `must be > ${String(p.limit)}, got ${repr(e.data)}` };
    case 'minimum':
      return { path, message: `must be >= ${String(p.limit)}, got ${repr(e.data)}` };
    default:
      return { path, message: e.message ?? e.keyword };
  }
}

/** An empty YAML field (`architectures:`) counts as absent, as the harness reads it. */
function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, dropNulls(v)]));
  return value;
}

/** What no schema can say: relations between fields. harness/task/model.py checks the same ones. */
function crossFieldProblems(task: Task): TaskIssue[] {
  const out: TaskIssue[] = [];
  if (task.device === 'cuda' && task.architectures.length === 0) out.push({ path: ['architectures'], message: 'a cuda task needs at least one architecture (e.g. [sm_90])' });
  // Triton runs on either device (interpreted on a CPU); native code in the device's language.
  const languages: string[] = task.device === 'cpu' ? ['cpp', 'triton'] : ['cuda', 'triton'];
  if (!languages.includes(task.kernel.language)) out.push({ path: ['kernel', 'language'], message: `a ${task.device} task is written in '${languages[0]}', not '${task.kernel.language}'` });
  const names = new Set<string>();
  task.kernel.args.forEach((a, i) => {
    if (names.has(a.name)) out.push({ path: ['kernel', 'args', i, 'name'], message: `'${a.name}' must be a unique identifier` });
    names.add(a.name);
    if (a.kind === 'stream' && task.device !== 'cuda') out.push({ path: ['kernel', 'args', i, 'kind'], message: 'a stream argument exists only for cuda tasks' });
  });
  if (!task.kernel.args.some((a) => a.kind === 'tensor' && a.role === 'output')) out.push({ path: ['kernel', 'args'], message: 'at least one tensor with role: output is required' });
  if (task.kernel.args.filter((a) => a.kind === 'stream').length > 1) out.push({ path: ['kernel', 'args'], message: 'at most one stream argument' });
  const params = new Set(task.scenarios.params);
  task.scenarios.grid.forEach((block, i) => {
    for (const key of Object.keys(block)) {
      if (key !== 'where' && !params.has(key)) out.push({ path: ['scenarios', 'grid', i, key], message: `'${key}' is not in scenarios.params (${[...params].join(', ')})` });
    }
  });
  const peers = new Set<string>();
  task.peers.forEach((p, i) => {
    if (peers.has(p.name)) out.push({ path: ['peers', i, 'name'], message: `duplicate peer '${p.name}'` });
    if ((p.fn === undefined) === (p.python === undefined)) out.push({ path: ['peers', i], message: `give exactly one of fn (a function in reference.py) or python (<file.py>:<function>), got ${p.fn === undefined ? 'neither' : 'both'}` });
    peers.add(p.name);
  });
  if (task.goal.vs === 'best_peer' && task.peers.length === 0) out.push({ path: ['goal', 'vs'], message: 'best_peer needs at least one peer' });
  const { min_reps: min = 10, max_reps: max = 2000 } = task.timing;
  if (max < min) out.push({ path: ['timing', 'max_reps'], message: `must be >= min_reps (${min})` });
  return out;
}

/** Validates a parsed task.yaml: the task (defaults filled, expressions as strings), or every problem. */
export function validateTask(raw: unknown): { task: Task; issues: [] } | { task?: undefined; issues: TaskIssue[] } {
  const data = dropNulls(raw);
  if (!validate(data)) return { issues: (validate.errors ?? []).map(issueOf).filter((i): i is TaskIssue => i !== undefined) };
  const task = data as Task;
  for (const arg of task.kernel.args) if ('value' in arg) arg.value = String(arg.value);
  task.metrics ??= {};
  for (const key of ['flops', 'bytes'] as const) if (task.metrics[key] !== undefined) task.metrics[key] = String(task.metrics[key]);
  task.peak ??= {};
  // The harness's default goal: beat the strongest peer when there is one, else the baseline.
  task.goal = { vs: task.goal?.vs ?? (task.peers.length > 0 ? 'best_peer' : 'baseline'), speedup: task.goal?.speedup ?? 1 };
  const issues = crossFieldProblems(task);
  return issues.length > 0 ? { issues } : { task, issues: [] };
}
