import type { InitArg } from './spec.js';

/**
 * The well-known operators `task init --op` knows: their arguments (canonical names, in the usual
 * order), default scenarios, inputs that make a wrong kernel fail, the exact reference in float64,
 * PyTorch's own result in the output's precision (lowp) and PyTorch as the peer. The Python below
 * uses the canonical names; reference.py binds them to the kernel's own argument names.
 */
export interface OpTemplate {
  summary: (dtype: string) => string;
  args: InitArg[];
  /** The grid and extra scenarios, per device. */
  shapes: Record<'cpu' | 'cuda', { grid: Record<string, number[]>; list: Record<string, number>[]; where?: string }>;
  /** Python lines of make_inputs, with the params bound and R(*shape) / U(*shape) drawing normal / uniform values from the seed on the device: sets each input by canonical name. */
  inputs: string[];
  /** A Python expression of the canonical tensors: the exact result, computed in float64 (`d(t)`). */
  exact: string;
  /** The same in the tensors' own precision (`t` as given); `lowp` falls back to float32 where the CPU lacks a half kernel. */
  plain: string;
  /** Extra peers: name → Python body lines (the canonical tensors bound), returning the output tensor. */
  peers?: Record<string, string[]>;
  flops?: string;
  /** bytes, with `eb_<name>` the element size of each tensor. */
  bytes: string;
  /** Why these inputs, for reference.py's comment. */
  why: string;
}

const rowCol = (extra: Record<string, number>[] = []) => ({
  cpu: { grid: { rows: [16, 256], cols: [128, 1024] }, list: [{ rows: 7, cols: 33 }, { rows: 1, cols: 4097 }, ...extra] },
  cuda: { grid: { rows: [1, 1024, 16384], cols: [1024, 4096, 8192] }, list: [{ rows: 7, cols: 1000 }, { rows: 4097, cols: 1000 }, { rows: 17, cols: 16385 }, ...extra] },
});

const tensor = (name: string, role: 'input' | 'output', shape: string[]): InitArg => ({ name, kind: 'tensor', dtype: 'float32', role, shape });
const scalar = (name: string, kind: 'int64' | 'float32', value: string): InitArg => ({ name, kind, value });

export const OPS = {
  softmax: {
    summary: (dt) => `Row-wise softmax of a ${dt} matrix.`,
    args: [tensor('x', 'input', ['rows', 'cols']), tensor('y', 'output', ['rows', 'cols']), scalar('rows', 'int64', 'rows'), scalar('cols', 'int64', 'cols')],
    shapes: rowCol(),
    inputs: ['# Rows offset by up to about +-90: exp overflows unless the kernel subtracts the row maximum.', 'x = R(rows, cols) * 2 + R(rows, 1) * 30'],
    exact: 'torch.softmax(d(x), dim=-1)',
    plain: 'torch.softmax(x, dim=-1)',
    flops: '5 * rows * cols',
    bytes: '(eb_x + eb_y) * rows * cols',
    why: 'row offsets large enough that exp overflows without the row maximum',
  },
  layernorm: {
    summary: (dt) => `Row-wise LayerNorm forward of a ${dt} matrix, y = (x - mean) / sqrt(var + eps) * w + b.`,
    args: [tensor('x', 'input', ['rows', 'cols']), tensor('w', 'input', ['cols']), tensor('b', 'input', ['cols']), tensor('y', 'output', ['rows', 'cols']), scalar('rows', 'int64', 'rows'), scalar('cols', 'int64', 'cols'), scalar('eps', 'float32', '1e-5')],
    shapes: rowCol(),
    inputs: [
      '# Rows of different scales and offsets, so a wrong mean or variance cannot pass; weights near 1.',
      'x = R(rows, cols) * torch.exp2(U(rows, 1) * 4 - 2) + R(rows, 1) * 3',
      'w = 1 + 0.5 * R(cols)',
      'b = 0.5 * R(cols)',
    ],
    exact: 'torch.nn.functional.layer_norm(d(x), (x.shape[-1],), d(w), d(b), EPS)',
    plain: 'torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, EPS)',
    flops: '8 * rows * cols',
    bytes: '(eb_x + eb_y) * rows * cols + (eb_w + eb_b) * cols',
    why: 'rows of different scales and offsets',
  },
  rmsnorm: {
    summary: (dt) => `Row-wise RMSNorm forward of a ${dt} matrix, y = x * rsqrt(mean(x^2) + eps) * w.`,
    args: [tensor('x', 'input', ['rows', 'cols']), tensor('w', 'input', ['cols']), tensor('y', 'output', ['rows', 'cols']), scalar('rows', 'int64', 'rows'), scalar('cols', 'int64', 'cols'), scalar('eps', 'float32', '1e-6')],
    shapes: rowCol(),
    inputs: ['# Rows of different magnitudes (x0.25 .. x4), so a wrong row\'s statistics cannot pass.', 'x = R(rows, cols) * torch.exp2(U(rows, 1) * 4 - 2)', 'w = 1 + 0.5 * R(cols)'],
    exact: 'd(x) * torch.rsqrt(d(x).pow(2).mean(-1, keepdim=True) + EPS) * d(w)',
    plain: 'x * torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS) * w',
    peers: { torch_rms_norm: ['fn = getattr(torch.nn.functional, "rms_norm", None)', 'if fn is None:', '    raise Unsupported("torch %s has no torch.nn.functional.rms_norm" % torch.__version__)', 'return fn(x, (x.shape[-1],), w, EPS)'] },
    flops: '4 * rows * cols',
    bytes: '(eb_x + eb_y) * rows * cols + eb_w * cols',
    why: 'rows of different magnitudes',
  },
  matmul: {
    summary: (dt) => `Matrix product c = a @ b of ${dt} matrices, a [M, K], b [K, N].`,
    args: [tensor('a', 'input', ['M', 'K']), tensor('b', 'input', ['K', 'N']), tensor('c', 'output', ['M', 'N']), scalar('M', 'int64', 'M'), scalar('N', 'int64', 'N'), scalar('K', 'int64', 'K')],
    shapes: {
      cpu: { grid: { M: [64, 128], N: [64, 128], K: [64, 256] }, list: [{ M: 33, N: 17, K: 65 }, { M: 1, N: 128, K: 300 }] },
      cuda: { grid: { M: [128, 1024, 4096], N: [1024, 4096], K: [1024, 4096] }, list: [{ M: 1, N: 4096, K: 4096 }, { M: 4097, N: 1000, K: 1000 }] },
    },
    inputs: ['# Scaled so that sums over K stay near 1 whatever K is.', 'a = R(M, K) / K ** 0.5', 'b = R(K, N) + 0.25'],
    exact: 'd(a) @ d(b)',
    plain: 'a @ b',
    flops: '2 * M * N * K',
    bytes: 'eb_a * M * K + eb_b * K * N + eb_c * M * N',
    why: 'values that keep the sums near 1',
  },
} as const satisfies Record<string, OpTemplate>;

export type OpName = keyof typeof OPS;
export const OP_NAMES = Object.keys(OPS) as OpName[];
