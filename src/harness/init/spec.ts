import { UserInputError } from '../../core/errors.js';
import type { CEntry } from '../c-signature.js';
import { DTYPES, type TaskArg } from '../task-schema.js';

/**
 * What `task init` is told, in the words a person types: the kernel's arguments (`--args`), the
 * scenario grid (`--shapes`), extra scenarios (`--scenarios`), dtypes (`--dtypes`). Parsed into
 * task.yaml's terms here, with an error that shows the expected form.
 */

/** A task argument as init builds it: a tensor also knows its shape, as expressions of the params. */
export type InitArg = TaskArg & { shape?: string[] };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ARG_FORM = 'name[dims][:dtype][:in|:out][=value], e.g. "x[rows,cols] y[rows,cols]:out rows:int64 eps:float32=1e-5"';

/** Splits on commas, semicolons and spaces outside brackets. */
function splitTop(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of text) {
    if (c === '[' || c === '(') depth++;
    if (c === ']' || c === ')') depth--;
    if (depth === 0 && (c === ',' || c === ';' || /\s/.test(c))) {
      if (cur) out.push(cur);
      cur = '';
    } else cur += c;
  }
  if (cur) out.push(cur);
  return out;
}

export interface ArgItem {
  name: string;
  shape?: string[];
  type?: string;
  role?: 'input' | 'output';
  value?: string;
}

/** `--args`: one item per argument, in the entry point's order. */
export function parseArgSpec(text: string): ArgItem[] {
  const items = splitTop(text);
  if (items.length === 0) throw new UserInputError(`--args is empty: give ${ARG_FORM}`, { code: 'init_args' });
  return items.map((item) => {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[([^\]]*)\])?((?::[A-Za-z0-9_]+)*)(?:=(.+))?$/.exec(item);
    if (!m) throw new UserInputError(`--args: cannot read '${item}': give ${ARG_FORM}`, { code: 'init_args' });
    const out: ArgItem = { name: m[1]! };
    if (m[2] !== undefined) out.shape = m[2].split(',').map((d) => d.trim()).filter(Boolean);
    for (const part of (m[3] ?? '').split(':').filter(Boolean)) {
      if (part === 'in' || part === 'input') out.role = 'input';
      else if (part === 'out' || part === 'output') out.role = 'output';
      else if ([...DTYPES, 'stream'].includes(part)) out.type = part;
      else throw new UserInputError(`--args: '${part}' in '${item}' is not a dtype (${DTYPES.join(', ')}), stream, in or out${suggestDtype(part)}`, { code: 'init_args' });
    }
    if (m[4] !== undefined) out.value = m[4].trim();
    return out;
  });
}

const DTYPE_ALIASES: Record<string, string> = { f32: 'float32', fp32: 'float32', float: 'float32', f16: 'float16', fp16: 'float16', half: 'float16', bf16: 'bfloat16', i32: 'int32', int: 'int32', i64: 'int64', long: 'int64' };
function suggestDtype(word: string): string {
  const hit = DTYPE_ALIASES[word.toLowerCase()];
  return hit ? `; did you mean ${hit}?` : '';
}

/** `--dtypes float32` (every floating tensor) or `--dtypes x=bfloat16,y=float32`. */
export function parseDtypes(text: string | undefined): { all?: string; byName: Record<string, string> } {
  const out: { all?: string; byName: Record<string, string> } = { byName: {} };
  if (!text) return out;
  for (const item of splitTop(text)) {
    const [name, dtype] = item.includes('=') ? item.split('=', 2) : [undefined, item];
    if (!DTYPES.includes(dtype!)) throw new UserInputError(`--dtypes: '${dtype}' is not one of ${DTYPES.join(', ')}${suggestDtype(dtype!)}`, { code: 'init_dtypes' });
    if (name === undefined) {
      if (out.all && out.all !== dtype) throw new UserInputError(`--dtypes ${text}: a task has one dtype per tensor; for ${out.all} and ${dtype}, make two tasks or name the tensors (x=bfloat16,y=float32)`, { code: 'init_dtypes' });
      out.all = dtype;
    } else out.byName[name] = dtype!;
  }
  return out;
}

/** `--shapes "rows=64,256 cols=128,1024"`: the grid, one list of values per param, in order. */
export function parseShapes(text: string): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  const items = text.trim().split(/\s+|;/).filter(Boolean);
  for (const item of items) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=([0-9_,]+)$/.exec(item);
    if (!m) throw new UserInputError(`--shapes: cannot read '${item}': give each param with its values, e.g. "rows=64,256 cols=128,1024"`, { code: 'init_shapes' });
    const values = m[2]!.split(',').filter(Boolean).map((v) => Number(v.replaceAll('_', '')));
    if (values.length === 0 || values.some((v) => !Number.isInteger(v) || v < 0)) throw new UserInputError(`--shapes: ${m[1]} needs whole numbers, got ${m[2]}`, { code: 'init_shapes' });
    out[m[1]!] = values;
  }
  if (Object.keys(out).length === 0) throw new UserInputError('--shapes is empty: give e.g. "rows=64,256 cols=128,1024"', { code: 'init_shapes' });
  return out;
}

/** `--scenarios "rows=7,cols=33; rows=1,cols=4097"`: scenarios added after the grid. */
export function parseScenarioList(text: string | undefined, params: string[]): Record<string, number>[] {
  if (!text) return [];
  return text
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const scenario: Record<string, number> = {};
      for (const kv of s.split(/[,\s]+/).filter(Boolean)) {
        const m = /^([A-Za-z_][A-Za-z0-9_]*)=(\d[\d_]*)$/.exec(kv);
        if (!m) throw new UserInputError(`--scenarios: cannot read '${kv}' in '${s}': give "rows=7,cols=33; rows=1,cols=4097"`, { code: 'init_scenarios' });
        scenario[m[1]!] = Number(m[2]!.replaceAll('_', ''));
      }
      const missing = params.filter((p) => !(p in scenario));
      const extra = Object.keys(scenario).filter((p) => !params.includes(p));
      if (missing.length || extra.length) throw new UserInputError(`--scenarios '${s}': give exactly the params ${params.join(', ')}${missing.length ? ` (missing ${missing.join(', ')})` : ''}${extra.length ? ` (not params: ${extra.join(', ')})` : ''}`, { code: 'init_scenarios' });
      return scenario;
    });
}

const C_DTYPES: [RegExp, string][] = [
  [/^float$/, 'float32'],
  [/^(__half|half|c10::Half|at::Half)$/, 'float16'],
  [/^(__nv_bfloat16|nv_bfloat16|bfloat16|__bf16|c10::BFloat16|at::BFloat16)$/, 'bfloat16'],
  [/^(int32_t|int|std::int32_t)$/, 'int32'],
  [/^(int64_t|long long|long|std::int64_t|long int|long long int)$/, 'int64'],
];
const baseType = (t: string) => t.replace(/\*/g, ' ').replace(/\b(const|volatile|__restrict__|__restrict|restrict)\b/g, ' ').replace(/\s+/g, ' ').trim();
const dtypeOfC = (t: string) => C_DTYPES.find(([re]) => re.test(baseType(t)))?.[1];

/** The arguments a C/C++/CUDA entry point takes: pointers are tensors (const: inputs), the rest scalars. */
export function argsFromCEntry(entry: CEntry): ArgItem[] {
  return entry.params.map((p, i) => {
    if (!NAME.test(p.name)) throw new UserInputError(`parameter ${i + 1} of ${entry.name}() (${p.type}) has no name: name every parameter`, { code: 'init_kernel' });
    if (baseType(p.type) === 'cudaStream_t') return { name: p.name, type: 'stream' };
    const dtype = dtypeOfC(p.type);
    if (!dtype) throw new UserInputError(`parameter ${p.name} of ${entry.name}() is ${p.type}: the harness passes float, __half, __nv_bfloat16, int32_t and int64_t values and pointers, and cudaStream_t (docs/tasks.md, the kernel ABI)`, { code: 'init_kernel' });
    if (p.type.includes('*')) return { name: p.name, type: dtype, role: /\bconst\b/.test(p.type.split('*')[0]!) ? 'input' : 'output' };
    if (dtype === 'float16' || dtype === 'bfloat16') throw new UserInputError(`parameter ${p.name} of ${entry.name}() is a ${p.type} value: scalar arguments are int32_t, int64_t or float`, { code: 'init_kernel' });
    return { name: p.name, type: dtype };
  });
}

/** A Triton entry's parameter names (`def softmax(x, y, rows, cols):`), or undefined when not found. */
export function paramsOfPythonDef(source: string, fn: string): string[] | undefined {
  const start = new RegExp(`^def\\s+${fn}\\s*\\(`, 'm').exec(source);
  if (!start) return undefined;
  let end = start.index + start[0].length;
  for (let depth = 1; end < source.length && depth > 0; end++) {
    if ('([{'.includes(source[end]!)) depth++;
    else if (')]}'.includes(source[end]!)) depth--;
  }
  const m = [undefined, source.slice(start.index + start[0].length, end - 1)] as const;
  // Top-level commas only: a default or an annotation may hold its own (`shape=(1, 2)`).
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of m[1]!) {
    if ('([{'.includes(c)) depth++;
    if (')]}'.includes(c)) depth--;
    if (c === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  // *args and **kwargs are not named arguments the task passes.
  return parts.map((p) => p.replace(/[:=][\s\S]*$/, '').trim()).filter((p) => p && p !== '/' && !p.startsWith('*'));
}

/** The names of a Python file's top-level functions that are not @triton.jit kernels. */
export function pythonEntryCandidates(source: string): string[] {
  const out: string[] = [];
  const lines = source.split('\n');
  lines.forEach((line, i) => {
    const m = /^def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(/.exec(line);
    if (!m || m[1]!.startsWith('_')) return;
    let j = i - 1;
    let jit = false;
    while (j >= 0 && lines[j]!.startsWith('@')) jit ||= /triton\.(jit|autotune|heuristics)|^@jit/.test(lines[j--]!);
    if (!jit) out.push(m[1]!);
  });
  return out;
}

/**
 * The task's arguments: the items given (`--args`) over the ones read from the kernel, matched by
 * name (or taken as they are when the kernel's signature is unknown, as for Triton), then completed:
 * a tensor's dtype from --dtypes, a scalar's value its own name when that is a param.
 */
export function resolveArgs(input: { fromKernel?: ArgItem[]; given?: ArgItem[]; dtypes: ReturnType<typeof parseDtypes>; params: string[]; device: 'cpu' | 'cuda'; valueLater?: boolean }): InitArg[] {
  let items: ArgItem[];
  if (input.fromKernel && input.given) {
    const unknown = input.given.filter((g) => !input.fromKernel!.some((k) => k.name === g.name));
    if (unknown.length) throw new UserInputError(`--args names ${unknown.map((u) => u.name).join(', ')}, which the kernel's entry point does not take (${input.fromKernel.map((k) => k.name).join(', ')})`, { code: 'init_args' });
    items = input.fromKernel.map((k) => ({ ...k, ...Object.fromEntries(Object.entries(input.given!.find((g) => g.name === k.name) ?? {}).filter(([, v]) => v !== undefined)) }));
  } else items = input.fromKernel ?? input.given ?? [];
  if (items.length === 0) throw new UserInputError(`the kernel's arguments are unknown: give --args (${ARG_FORM})`, { code: 'init_args' });
  return items.map((it): InitArg => {
    if (it.type === 'stream') {
      if (input.device !== 'cuda') throw new UserInputError(`${it.name} is a stream, which only a cuda task has`, { code: 'init_args' });
      return { name: it.name, kind: 'stream' };
    }
    const tensor = it.shape !== undefined || it.role !== undefined;
    if (tensor) {
      const dtype = input.dtypes.byName[it.name] ?? (it.type && DTYPES.includes(it.type) ? it.type : undefined) ?? input.dtypes.all ?? 'float32';
      return { name: it.name, kind: 'tensor', dtype, role: it.role ?? 'input', ...(it.shape ? { shape: it.shape } : {}) };
    }
    const kind = it.type === 'int32' || it.type === 'int64' || it.type === 'float32' ? it.type : 'int64';
    const value = it.value ?? (input.params.includes(it.name) ? it.name : input.valueLater ? '' : undefined);
    if (value === undefined) throw new UserInputError(`scalar ${it.name} has no value: give it in --args as ${it.name}=<expression of ${input.params.join(', ') || 'the params'}>, or name a param ${it.name}`, { code: 'init_args' });
    return { name: it.name, kind, value };
  });
}
