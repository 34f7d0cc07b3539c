import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKernelseek } from '../support/cli.js';
import { createTempDir } from '../support/db.js';

/**
 * `kernelseek task init` by flags, as a script or CI would run it, against the real harness on the
 * CPU: the task it writes passes `tasks --check` and its baseline evaluates, correct, against the
 * reference init wrote.
 */

const TEAM_SOFTMAX = `#include <cmath>
#include <cstdint>

// The team's softmax: its own names for everything.
extern "C" int team_softmax(const float* in, float* out, int64_t n_rows, int64_t n_cols) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* x = in + r * n_cols;
    float* y = out + r * n_cols;
    float m = x[0];
    for (int64_t c = 1; c < n_cols; ++c) m = x[c] > m ? x[c] : m;
    double s = 0;
    for (int64_t c = 0; c < n_cols; ++c) { y[c] = std::exp(x[c] - m); s += y[c]; }
    for (int64_t c = 0; c < n_cols; ++c) y[c] = static_cast<float>(y[c] / s);
  }
  return 0;
}
`;

const AXPY = `#include <cstdint>

extern "C" int scaled_add(const float* x, const float* w, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * 2.0f + w[i];
  return 0;
}
`;

const AXPY_REF = `import torch


def scaled_add_ref(x, w):
    """What the team's op computes."""
    return x * 2.0 + w
`;

let tmp: Awaited<ReturnType<typeof createTempDir>>;
let env: Record<string, string | undefined>;
beforeAll(async () => {
  tmp = await createTempDir('ks-task-init-');
  env = { PATH: process.env.PATH, HOME: process.env.HOME, KERNELSEEK_DATA_DIR: path.join(tmp.dir, 'data') };
  await writeFile(path.join(tmp.dir, 'team_softmax.cpp'), TEAM_SOFTMAX);
  await writeFile(path.join(tmp.dir, 'axpy.cpp'), AXPY);
  await writeFile(path.join(tmp.dir, 'axpy_ref.py'), AXPY_REF);
});
afterAll(() => tmp.remove());

describe('kernelseek task init (by flags, a cpu task, the real harness)', () => {
  it('from a well-known op and a kernel with names of its own: writes a task that passes tasks --check and whose baseline evaluates', async () => {
    const out = path.join(tmp.dir, 'tasks');
    const r = await runKernelseek(
      ['task', 'init', '--name', 'team_softmax', '--kernel', path.join(tmp.dir, 'team_softmax.cpp'), '--op', 'softmax', '--device', 'cpu', '--shapes', 'rows=4,32 cols=64,300', '--scenarios', 'rows=3,cols=7', '--out', out],
      env,
    );
    expect(r, r.stderr + r.stdout).toMatchObject({ code: 0 });
    const dir = path.join(out, 'team_softmax');
    const yaml = await readFile(path.join(dir, 'task.yaml'), 'utf8');
    // The kernel's own names and order, its values taken from the params.
    expect(yaml).toContain('entry: team_softmax');
    expect(yaml).toContain('- {name: in, kind: tensor, dtype: float32, role: input}');
    expect(yaml).toContain('- {name: n_rows, kind: int64, value: "rows"}');
    expect(yaml).toMatch(/tolerance:\n(\s+# .*\n)+\s+rule: lowp_relative\n\s+factor: 2\.0\n\s+atol: 1\.0e-6/);
    expect(await readFile(path.join(dir, 'baseline.cpp'), 'utf8')).toBe(TEAM_SOFTMAX);
    expect(await readFile(path.join(dir, 'reference.py'), 'utf8')).toMatch(/def reference\(inputs, scenario\):\n.*\n\s+x = inputs\["in"\]\n\s+return \{"out": torch\.softmax\(d\(x\), dim=-1\)\}/);
    expect(r.stdout).toMatch(/Check: 0 errors/);
    expect(r.stdout).toMatch(/The baseline agrees with the reference on 3\/3 scenarios\. Its speed: r4-c64 [\d.e-]+ ms, r32-c300 [\d.e-]+ ms, r3-c7 [\d.e-]+ ms\./);
    expect(r.stdout).toMatch(/Peers found: torch \(the baseline runs [\d.]+x as fast\)/);
    const check = await runKernelseek(['tasks', '--check', dir], env);
    expect(check, check.stdout).toMatchObject({ code: 0 });
    expect(check.stdout).toMatch(/✓ team_softmax/);
  }, 240_000);

  it('from your own PyTorch function, with the arguments and shapes given as flags', async () => {
    const out = path.join(tmp.dir, 'tasks2');
    const r = await runKernelseek(
      [
        'task', 'init', '--name', 'scaled_add', '--kernel', path.join(tmp.dir, 'axpy.cpp'), '--reference', `${path.join(tmp.dir, 'axpy_ref.py')}:scaled_add_ref`,
        '--args', 'x[n] w[n] y[n]', '--shapes', 'n=100,5000', '--goal', '1.2x:baseline', '--out', out,
      ],
      env,
    );
    expect(r, r.stderr + r.stdout).toMatchObject({ code: 0 });
    const dir = path.join(out, 'scaled_add');
    const reference = await readFile(path.join(dir, 'reference.py'), 'utf8');
    expect(reference).toContain(AXPY_REF.trim());
    expect(reference).toMatch(/out = _your_reference\(x=args\["x"\], w=args\["w"\]\)/);
    expect(await readFile(path.join(dir, 'task.yaml'), 'utf8')).toMatch(/goal: \{vs: baseline, speedup: 1\.2\}/);
    expect(r.stdout).toMatch(/The baseline agrees with the reference on 2\/2 scenarios/);
    expect((await runKernelseek(['tasks', '--check', dir], env)).code).toBe(0);
  }, 240_000);

  it('says what is missing or wrong before writing anything', async () => {
    const out = path.join(tmp.dir, 'tasks3');
    const kernel = path.join(tmp.dir, 'team_softmax.cpp');
    const missing = await runKernelseek(['task', 'init', '--kernel', kernel], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/task init needs --name, --op or --reference \(no terminal to ask on\)/);
    const dtype = await runKernelseek(['task', 'init', '--name', 'x1', '--kernel', kernel, '--op', 'softmax', '--dtypes', 'fp16', '--out', out], env);
    expect(dtype.stderr).toMatch(/--dtypes: 'fp16' is not one of float32, float16, bfloat16, int32, int64; did you mean float16\?/);
    const op = await runKernelseek(['task', 'init', '--name', 'x2', '--kernel', kernel, '--op', 'softmaxx', '--out', out], env);
    expect(op.stderr).toMatch(/--op softmaxx: the known operators are softmax, layernorm, rmsnorm, matmul/);
    const shape = await runKernelseek(['task', 'init', '--name', 'x3', '--kernel', path.join(tmp.dir, 'axpy.cpp'), '--reference', `${path.join(tmp.dir, 'axpy_ref.py')}:scaled_add_ref`, '--shapes', 'n=8', '--out', out], env);
    expect(shape.stderr).toMatch(/give the shape of x, w, y in --args/);
    const wrongOp = await runKernelseek(['task', 'init', '--name', 'x4', '--kernel', path.join(tmp.dir, 'axpy.cpp'), '--op', 'softmax', '--out', out], env);
    expect(wrongOp.stderr).toMatch(/softmax takes x, y, rows, cols \(1 input tensor\(s\), 1 output\(s\), 2 scalar\(s\)\); scaled_add\(\) takes x, w, y, n \(2 input tensor\(s\)/);
    await expect(readFile(path.join(out, 'x1', 'task.yaml'))).rejects.toThrow();
    // A task folder is not replaced without --force.
    const again = await runKernelseek(['task', 'init', '--name', 'team_softmax', '--kernel', kernel, '--op', 'softmax', '--out', path.join(tmp.dir, 'tasks'), '--no-eval'], env);
    expect(again.stderr).toMatch(/team_softmax already exists: choose another --name, another --out, or --force/);
  }, 120_000);
});

describe('kernelseek task init on a terminal', () => {
  it('asks for what the flags left out, asks again after a wrong answer, and writes the task', async () => {
    const { PassThrough } = await import('node:stream');
    const { runCli } = await import('../../src/cli/run-cli.js');
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let asked = '';
    stdout.on('data', (d) => (out += String(d)));
    // Each question is answered when it appears on the terminal (stderr).
    const answers: [RegExp, string][] = [
      [/Your kernel/, path.join(tmp.dir, 'team_softmax.cpp')],
      [/The task's name \[team_softmax\]/, 'asked_softmax'],
      [/The reference: a well-known op/, 'softmax'],
      [/The device, cpu or cuda/, 'cpu'],
      [/The scenario grid/, 'rows=4,32 cols=sixty'],
      [/The goal/, ''],
      // The plan fails on the grid: what was wrong, then the question again.
      [/cannot read 'cols=sixty'[\s\S]*The scenario grid/, 'rows=4,32 cols=64'],
    ];
    stderr.on('data', (d) => {
      asked += String(d);
      const next = answers[0];
      if (next && next[0].test(asked)) {
        answers.shift();
        asked = '';
        stdin.write(`${next[1]}\n`);
      }
    });
    const out2 = path.join(tmp.dir, 'asked');
    const code = await runCli(['task', 'init', '--out', out2, '--no-eval'], { env, stdin, stdout, stderr, cwd: tmp.dir, interactive: true, signal: new AbortController().signal, exitCode: 0 });
    expect(answers, out).toEqual([]);
    expect(code, out).toBe(0);
    const yaml = await readFile(path.join(out2, 'asked_softmax', 'task.yaml'), 'utf8');
    expect(yaml).toContain('name: asked_softmax');
    expect(yaml).toContain('- {rows: [4, 32], cols: [64]}');
    expect(out).toMatch(/Check: 0 errors/);
  }, 120_000);
});
