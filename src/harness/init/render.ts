import type { KernelLanguage } from '../candidate.js';
import { OPS, type OpName } from './ops.js';
import type { InitArg } from './spec.js';

/**
 * The files `task init` writes, as text: task.yaml and reference.py, plain and commented, meant to be
 * read and edited (docs/tasks.md is the reference for every field).
 */

export interface InitPlan {
  name: string;
  summary: string;
  device: 'cpu' | 'cuda';
  architectures: string[];
  language: KernelLanguage;
  /** task.yaml kernel.file: `kernel.cpp`, `kernel.py` or `kernel/`. */
  kernelFile: string;
  /** task.yaml kernel.baseline: `baseline.cpp`, `baseline.py` or `baseline/`. */
  baseline: string;
  entry: string;
  args: InitArg[];
  params: string[];
  grid: Record<string, number[]>;
  list: Record<string, number>[];
  id: string;
  quick: string[];
  tolerance: { factor: number; atol: number; why: string[] };
  goal: { vs: 'best_peer' | 'baseline'; speedup: number };
  reference: { kind: 'op'; op: OpName; names: Record<string, string> } | { kind: 'fn'; file: string; fn: string; text: string; fnParams?: string[] };
  peers: { name: string; fn: string; why: string }[];
  metrics: { flops?: string; bytes?: string };
  denylist: string[];
  includeDirs: string[];
  headers: string[];
  /** Where the kernel and the reference came from, for the comments. */
  origin: string;
}

const ELEMENT_BYTES: Record<string, number> = { float32: 4, float16: 2, bfloat16: 2, int32: 4, int64: 8 };
const C_TYPES: Record<string, string> = { float32: 'float', float16: '__half', bfloat16: '__nv_bfloat16', int32: 'int32_t', int64: 'int64_t' };
const TORCH: Record<string, string> = { float32: 'torch.float32', float16: 'torch.float16', bfloat16: 'torch.bfloat16', int32: 'torch.int32', int64: 'torch.int64' };

const q = (s: string) => JSON.stringify(s);
const tensors = (plan: InitPlan) => plan.args.filter((a): a is InitArg & { kind: 'tensor' } => a.kind === 'tensor');

/** The tolerance for the outputs' precision, with the reasoning written beside it. */
export function toleranceFor(outputDtypes: string[]): InitPlan['tolerance'] {
  if (outputDtypes.every((d) => d.startsWith('int'))) {
    return { factor: 1, atol: 0, why: ['Integer outputs: lowp equals the reference, so the candidate must match exactly.'] };
  }
  const low = outputDtypes.some((d) => d === 'float16' || d === 'bfloat16');
  return {
    factor: 2,
    atol: low ? 1e-5 : 1e-6,
    why: [
      'max|candidate - reference| <= factor * max|lowp - reference| + atol, per output: reference in float64,',
      "lowp is PyTorch in the output's precision. factor 2: as accurate as PyTorch, with room for another",
      `order of summation; atol ${low ? '1e-5' : '1e-6'}: a floor for outputs near zero, well below the ${low ? 'half-precision' : 'float32'} rounding of values near 1.`,
    ],
  };
}

/** `bytes` for a task without a formula: every tensor read or written once. */
export function bytesOf(args: InitArg[]): string | undefined {
  const parts = args.filter((a) => a.kind === 'tensor' && a.shape?.length).map((a) => `${ELEMENT_BYTES[(a as { dtype: string }).dtype]} * ${a.shape!.map((d) => (/^[A-Za-z0-9_]+$/.test(d) ? d : `(${d})`)).join(' * ')}`);
  return parts.length ? parts.join(' + ') : undefined;
}

function cSignature(plan: InitPlan): string {
  if (plan.language === 'triton') return `def ${plan.entry}(${plan.args.filter((a) => a.kind !== 'stream').map((a) => a.name).join(', ')})`;
  const params = plan.args.map((a) => (a.kind === 'tensor' ? `${a.role === 'input' ? 'const ' : ''}${C_TYPES[a.dtype]}* ${a.name}` : a.kind === 'stream' ? `cudaStream_t ${a.name}` : `${a.kind === 'float32' ? 'float' : C_TYPES[a.kind]} ${a.name}`));
  return `extern "C" int ${plan.entry}(${params.join(', ')})`;
}

function yamlValue(v: number | string): string {
  return typeof v === 'number' ? String(v) : q(v);
}

export function renderTaskYaml(plan: InitPlan): string {
  const L: string[] = [];
  L.push(`# ${plan.name}: written by \`kernelseek task init\` ${plan.origin}.`);
  L.push('# Every field is explained in docs/tasks.md; `kernelseek tasks --check` checks this folder.');
  L.push('schema: kernelseek.task/1', `name: ${plan.name}`, `summary: ${q(plan.summary)}`, `device: ${plan.device}`);
  if (plan.device === 'cuda') L.push(`architectures: [${plan.architectures.join(', ')}]   # the GPUs the task is valid for`);
  L.push('kernel:', `  language: ${plan.language}`);
  L.push(`  file: ${plan.kernelFile}${plan.kernelFile.endsWith('/') ? '   # a folder: every source and header in it is the candidate' : ''}`);
  L.push(`  baseline: ${plan.baseline}`, `  entry: ${plan.entry}`, `  # ${cSignature(plan)}`);
  if (plan.language === 'triton') L.push('  # Called with torch tensors (the harness owns them) and Python numbers, in this order; writes the outputs in place.');
  else L.push('  # Returns 0 on success; tensors are contiguous, row-major.' + (plan.device === 'cuda' ? ' Launch on `stream`, do not synchronise.' : ''));
  L.push('  args:');
  for (const a of plan.args) {
    if (a.kind === 'tensor') L.push(`    - {name: ${a.name}, kind: tensor, dtype: ${a.dtype}, role: ${a.role}}${a.shape ? `   # [${a.shape.join(', ')}]` : ''}`);
    else if (a.kind === 'stream') L.push(`    - {name: ${a.name}, kind: stream}`);
    else L.push(`    - {name: ${a.name}, kind: ${a.kind}, value: ${q(a.value)}}`);
  }
  if (plan.includeDirs.length) L.push(`  include_dirs: [${plan.includeDirs.join(', ')}]   # the task's own header folders, on every build's include path`);
  if (plan.headers.length) L.push(`  headers: [${plan.headers.join(', ')}]   # CUTLASS and CuTe of the version the set-up installs`);
  L.push('  compile:', '    flags: []');
  L.push('scenarios:', `  params: [${plan.params.join(', ')}]`, '  grid:   # each block is the cartesian product of its lists');
  L.push(`    - {${plan.params.map((p) => `${p}: [${plan.grid[p]!.join(', ')}]`).join(', ')}}`);
  if (plan.list.length) {
    L.push('  list:   # odd sizes: tails, a single row, sizes that are not powers of two');
    for (const s of plan.list) L.push(`    - {${plan.params.map((p) => `${p}: ${s[p]}`).join(', ')}}`);
  } else L.push('  list: []');
  L.push(`  id: ${q(plan.id)}`, `  quick: [${plan.quick.join(', ')}]   # a few ids for fast iteration`);
  L.push('tolerance:', ...plan.tolerance.why.map((w) => `  # ${w}`), '  rule: lowp_relative', `  factor: ${plan.tolerance.factor.toFixed(1)}`, `  atol: ${plan.tolerance.atol === 0 ? '0.0' : plan.tolerance.atol.toExponential(1).replace('e-', 'e-')}`);
  const metrics = Object.entries(plan.metrics).filter(([, v]) => v);
  if (metrics.length) L.push(`metrics: {${metrics.map(([k, v]) => `${k}: ${yamlValue(v!)}`).join(', ')}}   # work per scenario: TFLOP/s, GB/s`);
  L.push(plan.device === 'cpu' ? '# peak: {tflops: ..., gbps: ...}   # measure this machine: python3 -m tools.lab.cpu_peak' : '# peak: {tflops: ..., gbps: ...}   # the measured ceilings of the target GPU, for % of peak');
  L.push('peers:   # timed beside the candidate; functions in reference.py');
  for (const p of plan.peers) L.push(`  - {name: ${p.name}, fn: ${p.fn}}   # ${p.why}`);
  L.push(`goal: {vs: ${plan.goal.vs}, speedup: ${Number.isInteger(plan.goal.speedup) ? plan.goal.speedup.toFixed(1) : plan.goal.speedup}}   # the geomean speedup a run aims for`);
  L.push(`denylist: [${plan.denylist.join(', ')}]   # libraries a candidate may not use (docs/tasks.md, denylist)`);
  if (plan.device === 'cpu') {
    L.push('cpu_threads: 1   # PyTorch (the peers) on one core, as the kernel');
    L.push('timing: {target_rse: 0.02, min_reps: 10, max_reps: 200, max_seconds: 0.3, warmup_reps: 2}');
  }
  return `${L.join('\n')}\n`;
}

function bindParams(plan: InitPlan, indent: string): string[] {
  return plan.params.length ? [`${indent}${plan.params.join(', ')} = ${plan.params.map((p) => `int(scenario[${q(p)}])`).join(', ')}`] : [];
}

const HEADER = (plan: InitPlan) => [
  `"""Reference, low-precision twin and peers of the task ${plan.name} (written by \`kernelseek task init\` ${plan.origin}).`,
  '',
  'The harness imports this file (trusted code, outside every sandbox) to make the inputs, compute the',
  'exact result and time the peers. Edit it freely; keep the functions and their signatures',
  '(docs/tasks.md, reference.py). It must import on PyTorch 1.13 and 2.x.',
  '"""',
  'import math  # noqa: F401  (task expressions may use math)',
  '',
  'import torch',
  '',
  'try:  # the harness recognises this class; the module also loads without the harness',
  '    from harness.api import Unsupported',
  'except ImportError:  # pragma: no cover',
  '',
  '    class Unsupported(Exception):',
  '        """A peer cannot run this scenario."""',
  '',
];

const HELPERS = [
  '',
  'def d(t):',
  '    """t in float64, the reference\'s precision (integer tensors stay as they are)."""',
  '    return t.double() if t.is_floating_point() else t',
  '',
  '',
  'def _plain(fn, out_dtype, *tensors):',
  '    """fn in the tensors\' own precision, rounded to the output\'s. Where this PyTorch has no',
  '    half-precision kernel on the CPU, fn runs in float32 and is rounded: lowp is then a little too',
  '    accurate, and the tolerance a little tight."""',
  '    try:',
  '        return fn(*tensors).to(out_dtype)',
  '    except RuntimeError:',
  '        if not any(t.dtype in (torch.float16, torch.bfloat16) for t in tensors):',
  '            raise',
  '        return fn(*[t.float() if t.is_floating_point() else t for t in tensors]).to(out_dtype)',
];

function makeInputs(plan: InitPlan, lines: string[], inputs: { canonical: string; name: string; dtype: string }[]): string[] {
  return [
    '',
    '',
    'def make_inputs(scenario, seed, device):',
    ...bindParams(plan, '    '),
    '    gen = torch.Generator(device=device)',
    '    gen.manual_seed(int(seed))',
    '',
    '    def R(*shape):',
    '        return torch.randn(*shape, generator=gen, device=device)',
    '',
    '    def U(*shape):',
    '        return torch.rand(*shape, generator=gen, device=device)',
    '',
    ...lines.map((l) => `    ${l}`),
    `    return {${inputs.map((i) => `${q(i.name)}: ${i.canonical}.to(${TORCH[i.dtype]}).contiguous()`).join(', ')}}`,
    '',
    '',
    'def output_shapes(scenario):',
    ...bindParams(plan, '    '),
    `    return {${tensors(plan)
      .filter((t) => t.role === 'output')
      .map((t) => `${q(t.name)}: (${(t.shape ?? []).map((dim) => `int(${dim})`).join(', ')}${t.shape?.length === 1 ? ',' : ''})`)
      .join(', ')}}`,
  ];
}

function renderOpReference(plan: InitPlan & { reference: { kind: 'op' } }): string[] {
  const op = OPS[plan.reference.op];
  const names = plan.reference.names;
  const canonicalOf = (name: string) => Object.entries(names).find(([, n]) => n === name)?.[0] ?? name;
  const ins = tensors(plan).filter((t) => t.role === 'input');
  const out = tensors(plan).find((t) => t.role === 'output')!;
  const eps = plan.args.find((a) => a.kind === 'float32' && canonicalOf(a.name) === 'eps');
  const bind = ins.map((t) => `${canonicalOf(t.name)} = inputs[${q(t.name)}]`).join('; ');
  const lambdaParams = ins.map((t) => canonicalOf(t.name)).join(', ');
  const lines = [
    ...(eps && 'value' in eps ? [`EPS = ${eps.value}  # task.yaml passes the same value as \`${eps.name}\`: keep them equal`, ''] : []),
    ...HELPERS,
    ...makeInputs(plan, [...op.inputs], ins.map((t) => ({ canonical: canonicalOf(t.name), name: t.name, dtype: t.dtype }))),
    '',
    '',
    'def reference(inputs, scenario):',
    '    """The exact result, in float64."""',
    `    ${bind}`,
    `    return {${q(out.name)}: ${op.exact}}`,
    '',
    '',
    'def lowp(inputs, scenario):',
    `    """PyTorch's own result in the output's precision (${out.dtype}): its error sets the tolerance."""`,
    `    ${bind}`,
    `    return {${q(out.name)}: _plain(lambda ${lambdaParams}: ${op.plain}, ${TORCH[out.dtype]}, ${lambdaParams})}`,
    '',
    '',
    'def peer_torch(inputs, scenario):',
    '    """PyTorch in the inputs\' precision, as a user would call it."""',
    `    ${bind}`,
    '    try:',
    `        return {${q(out.name)}: ${op.plain}}`,
    '    except RuntimeError as exc:  # e.g. no half-precision kernel on this CPU',
    '        raise Unsupported(str(exc))',
  ];
  for (const [peer, body] of Object.entries((op as { peers?: Record<string, readonly string[]> }).peers ?? {})) {
    lines.push('', '', `def peer_${peer}(inputs, scenario):`, `    ${bind}`, `    def run():`, ...body.map((l) => `        ${l}`), `    return {${q(out.name)}: run()}`);
  }
  return lines;
}

function renderFnReference(plan: InitPlan & { reference: { kind: 'fn' } }): string[] {
  const ref = plan.reference;
  const ins = tensors(plan).filter((t) => t.role === 'input');
  const outs = tensors(plan).filter((t) => t.role === 'output');
  const scalars = plan.args.filter((a): a is InitArg & { value: string } => 'value' in a);
  const byName = ref.fnParams && ref.fnParams.length > 0 && ref.fnParams.every((p) => plan.args.some((a) => a.name === p));
  const call = byName ? ref.fnParams!.map((p) => `${p}=args[${q(p)}]`).join(', ') : ins.map((t) => `args[${q(t.name)}]`).join(', ');
  const inputLines = [
    '# Generic values from the seed: make them fit your operator where it matters (positive for a log,',
    '# row offsets for a softmax, ...), so that a constant or approximate output fails.',
    ...ins.map((t) => (t.dtype.startsWith('int') ? `${t.name}_ = torch.randint(-8, 8, (${(t.shape ?? []).join(', ')}${t.shape?.length === 1 ? ',' : ''}), generator=gen, device=device)` : `${t.name}_ = R(${(t.shape ?? []).join(', ')})`)),
  ];
  return [
    '',
    `# ---- your reference, copied from ${ref.file} ----`,
    ...ref.text.replace(/\s+$/, '').split('\n'),
    '# ---- end of your reference ----',
    '',
    `_your_reference = ${ref.fn}`,
    `_OUTPUTS = [${outs.map((o) => q(o.name)).join(', ')}]`,
    `_OUTPUT_DTYPES = {${outs.map((o) => `${q(o.name)}: ${TORCH[o.dtype]}`).join(', ')}}`,
    ...HELPERS,
    ...makeInputs(plan, inputLines, ins.map((t) => ({ canonical: `${t.name}_`, name: t.name, dtype: t.dtype }))),
    '',
    '',
    'def _call(inputs, scenario, prec):',
    `    """${ref.fn}() on the inputs (each through prec), its result as {output name: tensor}."""`,
    ...bindParams(plan, '    '),
    ...(scalars.length ? ['    from math import ceil, e, exp, floor, inf, log, log2, log10, pi, sqrt  # noqa: F401'] : []),
    `    args = {${[...ins.map((t) => `${q(t.name)}: prec(inputs[${q(t.name)}])`), ...scalars.map((s) => `${q(s.name)}: ${s.value}`)].join(', ')}}`,
    `    out = _your_reference(${call})`,
    '    if isinstance(out, dict):',
    '        return dict(out)',
    '    if isinstance(out, (tuple, list)):',
    '        return dict(zip(_OUTPUTS, out))',
    '    return {_OUTPUTS[0]: out}',
    '',
    '',
    'def reference(inputs, scenario):',
    '    """The exact result: your function on float64 inputs."""',
    '    return _call(inputs, scenario, d)',
    '',
    '',
    'def lowp(inputs, scenario):',
    "    \"\"\"Your function in the inputs' own precision, rounded to the outputs': its error sets the tolerance.\"\"\"",
    '    try:',
    '        out = _call(inputs, scenario, lambda t: t)',
    '    except RuntimeError:  # no half-precision kernel on this CPU: float32, rounded (see _plain)',
    '        out = _call(inputs, scenario, lambda t: t.float() if t.dtype in (torch.float16, torch.bfloat16) else t)',
    '    return {k: v.to(_OUTPUT_DTYPES[k]) for k, v in out.items()}',
    '',
    '',
    'def peer_torch(inputs, scenario):',
    '    """Your PyTorch function as it is, in the inputs\' precision."""',
    '    try:',
    '        return _call(inputs, scenario, lambda t: t)',
    '    except RuntimeError as exc:',
    '        raise Unsupported(str(exc))',
  ];
}

export function renderReferencePy(plan: InitPlan): string {
  const body = plan.reference.kind === 'op' ? renderOpReference(plan as InitPlan & { reference: { kind: 'op' } }) : renderFnReference(plan as InitPlan & { reference: { kind: 'fn' } });
  return `${[...HEADER(plan), ...body].join('\n')}\n`;
}
