import type { TaskArg } from './task-schema.js';

/**
 * Finds a kernel's `extern "C"` entry point in C, C++ or CUDA source and compares its parameters
 * with task.yaml's `kernel.args`. A reading of the text, not a compiler: it knows the types the
 * harness passes (docs/tasks.md, the kernel ABI) and says "cannot tell" for anything else (a
 * typedef, a macro) rather than guess.
 */

export interface CParam {
  /** The type as written, whitespace collapsed (`const float *`). */
  type: string;
  name: string;
}

export interface CEntry {
  name: string;
  params: CParam[];
  /** 1-based line of the name. */
  line: number;
  returns: string;
}

export interface SignatureFinding {
  severity: 'error' | 'warning';
  line?: number;
  /** The argument at fault (`kernel.args[1]`), or empty for the whole signature. */
  field: string;
  message: string;
  fix: string;
}

/** Comments and string contents blanked with spaces (newlines kept), so offsets and lines stay true. */
export function blankComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, (m) => {
    if (m.startsWith('"')) return m === '"C"' ? m : `"${m.slice(1, -1).replace(/[^\n]/g, ' ')}"`;
    if (m.startsWith("'")) return m;
    return m.replace(/[^\n]/g, ' ');
  });
}

/** Words that can precede `name(...)` inside a function body: a statement, not a declaration. */
const STATEMENT_WORDS = new Set(['return', 'else', 'if', 'while', 'for', 'switch', 'case', 'new', 'delete', 'throw', 'goto', 'sizeof', 'do']);

const lineAt = (src: string, offset: number) => src.slice(0, offset).split('\n').length;

/** Spans of `extern "C" { ... }` blocks. */
function externBlocks(src: string): [number, number][] {
  const out: [number, number][] = [];
  const re = /extern\s+"C"\s*\{/g;
  for (let m = re.exec(src); m; m = re.exec(src)) {
    let depth = 1;
    let i = m.index + m[0].length;
    for (; i < src.length && depth > 0; i++) {
      if (src[i] === '{') depth++;
      else if (src[i] === '}') depth--;
    }
    out.push([m.index, i]);
  }
  return out;
}

function splitParams(text: string): CParam[] {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed === 'void') return [];
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of trimmed) {
    if (c === '<' || c === '(' || c === '[') depth++;
    if (c === '>' || c === ')' || c === ']') depth--;
    if (c === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  return parts.map((p) => {
    const clean = p.replace(/\s+/g, ' ').replace(/\s*=.*$/, '').trim();
    const m = /^(.*?)([A-Za-z_][A-Za-z0-9_]*)\s*(\[\s*\])?$/.exec(clean);
    if (!m || m[1]!.trim() === '') return { type: clean, name: '' };
    const type = `${m[1]!.trim()}${m[3] ? ' *' : ''}`.replace(/\s*\*\s*/g, ' *').replace(/\s+/g, ' ').trim();
    return { type, name: m[2]! };
  });
}

/** Every function declared or defined with C linkage in `source` (`extern "C" int f(...)` or in an extern "C" block). */
export function findCEntries(source: string): CEntry[] {
  const src = blankComments(source);
  const blocks = externBlocks(src);
  const out: CEntry[] = [];
  const re = /((?:extern\s+"C"\s+)?(?:(?:__host__|__global__|__device__|static|inline|__attribute__\s*\(\([^)]*\)\))\s+)*)([A-Za-z_][A-Za-z0-9_:<>]*(?:\s*\*)?)\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*(?=[{;])/g;
  for (let m = re.exec(src); m; m = re.exec(src)) {
    const prefix = m[1] ?? '';
    const inBlock = blocks.some(([a, b]) => m!.index > a && m!.index < b);
    if (!/extern\s+"C"/.test(prefix) && !inBlock) continue;
    if (/\b(static|__global__|__device__)\b/.test(prefix) || STATEMENT_WORDS.has(m[2]!)) continue;
    const nameOffset = m.index + m[0].indexOf(m[3]!, (m[1] ?? '').length + m[2]!.length);
    out.push({ name: m[3]!, params: splitParams(m[4]!), line: lineAt(src, nameOffset), returns: m[2]!.replace(/\s+/g, '') });
  }
  // A declaration followed by its definition names one function.
  return out.filter((e, i) => out.findIndex((o) => o.name === e.name) === i);
}

const ELEMENT_TYPES: Record<string, string[]> = {
  float32: ['float'],
  float16: ['__half', 'half', 'c10::Half', 'at::Half'],
  bfloat16: ['__nv_bfloat16', 'nv_bfloat16', 'bfloat16', '__bf16', 'c10::BFloat16', 'at::BFloat16'],
  int32: ['int32_t', 'int', 'std::int32_t'],
  int64: ['int64_t', 'long long', 'long', 'std::int64_t', 'long int', 'long long int'],
};
const SCALAR_TYPES: Record<string, string[]> = { int32: ELEMENT_TYPES.int32!, int64: ELEMENT_TYPES.int64!, float32: ['float'] };
const C_SPELLING: Record<string, string> = { float32: 'float', float16: '__half', bfloat16: '__nv_bfloat16', int32: 'int32_t', int64: 'int64_t' };
const KNOWN = new Set([...Object.values(ELEMENT_TYPES).flat(), 'double', 'char', 'unsigned', 'short', 'size_t', 'uint32_t', 'uint64_t', 'int8_t', 'uint8_t', 'int16_t', 'void', 'cudaStream_t', 'bool']);

/** How task.yaml's arguments are written in C: the signature the kernel should have. */
export function expectedSignature(entry: string, args: readonly TaskArg[]): string {
  const params = args.map((a) => {
    if (a.kind === 'tensor') return `${a.role === 'input' ? 'const ' : ''}${C_SPELLING[a.dtype] ?? '?'}* ${a.name}`;
    if (a.kind === 'stream') return `cudaStream_t ${a.name}`;
    return `${a.kind === 'float32' ? 'float' : C_SPELLING[a.kind]} ${a.name}`;
  });
  return `extern "C" int ${entry}(${params.join(', ')})`;
}

function describeArg(a: TaskArg): string {
  if (a.kind === 'tensor') return `a pointer to ${a.role === 'input' ? 'const ' : ''}${C_SPELLING[a.dtype]} (tensor ${a.dtype}, ${a.role})`;
  if (a.kind === 'stream') return 'cudaStream_t';
  return `${a.kind === 'float32' ? 'float' : C_SPELLING[a.kind]} (${a.kind})`;
}

/** Compares one parameter with its argument; a message when they differ, `unknown` when it cannot tell. */
function compareParam(p: CParam, a: TaskArg): string | 'unknown' | undefined {
  const pointer = p.type.includes('*');
  const isConst = /\bconst\b/.test(p.type.split('*')[0]!);
  const base = p.type.replace(/\*/g, ' ').replace(/\b(const|volatile|__restrict__|__restrict|restrict)\b/g, ' ').replace(/\s+/g, ' ').trim();
  if (a.kind === 'tensor') {
    if (!ELEMENT_TYPES[a.dtype]) return undefined; // not a harness dtype: task.yaml's own problem, reported there
    if (!pointer) return `is ${p.type}, not a pointer`;
    if (!KNOWN.has(base)) return 'unknown';
    if (!ELEMENT_TYPES[a.dtype]!.includes(base)) return `points to ${base}, but the tensor is ${a.dtype} (${C_SPELLING[a.dtype]})`;
    if (a.role === 'output' && isConst) return 'is const, but the tensor is an output the kernel writes';
    return undefined;
  }
  if (a.kind === 'stream') return base === 'cudaStream_t' && !pointer ? undefined : KNOWN.has(base) || pointer ? `is ${p.type}, not cudaStream_t` : 'unknown';
  if (pointer) return `is a pointer (${p.type}), but ${a.name} is a ${a.kind} value`;
  if (!KNOWN.has(base)) return 'unknown';
  return SCALAR_TYPES[a.kind]!.includes(base) ? undefined : `is ${base}, but the argument is ${a.kind} (${a.kind === 'float32' ? 'float' : C_SPELLING[a.kind]})`;
}

/**
 * Checks the entry point in `sources` ({file: text}, every file of the kernel) against task.yaml.
 * Findings name the file and line through `where`.
 */
export function checkCEntry(sources: Record<string, string>, entry: string, args: readonly TaskArg[]): (SignatureFinding & { file?: string })[] {
  const expected = expectedSignature(entry, args);
  const all = Object.entries(sources).flatMap(([file, text]) => findCEntries(text).map((e) => ({ ...e, file })));
  const hits = all.filter((e) => e.name === entry);
  if (hits.length === 0) {
    const names = [...new Set(all.map((e) => e.name))];
    const exported = names.length > 0 ? ` It exports ${names.map((n) => `${n}()`).join(', ')}.` : ' It has no extern "C" function.';
    return [
      {
        severity: 'error',
        field: 'kernel.entry',
        message: `the baseline has no extern "C" function ${entry}().${exported}`,
        fix: names.length === 1 ? `set kernel.entry: ${names[0]}, or name the function ${entry}: ${expected}` : `define ${expected} { ... return 0; }`,
      },
    ];
  }
  const e = hits[0]!;
  const out: (SignatureFinding & { file?: string })[] = [];
  if (!/^(int|int32_t)$/.test(e.returns)) out.push({ severity: 'error', file: e.file, line: e.line, field: 'kernel.entry', message: `${entry}() returns ${e.returns}; the harness reads an int status (0 = success)`, fix: expected });
  if (e.params.length !== args.length) {
    out.push({
      severity: 'error',
      file: e.file,
      line: e.line,
      field: 'kernel.args',
      message: `${entry}() takes ${e.params.length} parameter${e.params.length === 1 ? '' : 's'} (${e.params.map((p) => `${p.type} ${p.name}`.trim()).join(', ')}); task.yaml gives ${args.length} (${args.map((a) => a.name).join(', ')})`,
      fix: `make the two agree: the harness calls ${expected}`,
    });
    return out;
  }
  args.forEach((a, i) => {
    const p = e.params[i]!;
    const diff = compareParam(p, a);
    if (diff === undefined) return;
    if (diff === 'unknown') {
      out.push({ severity: 'warning', file: e.file, line: e.line, field: `kernel.args[${i}]`, message: `cannot tell whether parameter ${i + 1} (${p.type} ${p.name}) is ${describeArg(a)}`, fix: `write it as ${expectedSignature(entry, [a]).replace(/^.*\((.*)\)$/, '$1')}` });
      return;
    }
    out.push({ severity: 'error', file: e.file, line: e.line, field: `kernel.args[${i}]`, message: `parameter ${i + 1} of ${entry}() (${p.type} ${p.name}) ${diff}`, fix: `task.yaml's ${a.name} is ${describeArg(a)}: change the parameter or the argument; the harness calls ${expected}` });
  });
  return out;
}
