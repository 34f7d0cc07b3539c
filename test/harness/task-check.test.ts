import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { recordBaselineFigures } from '../../src/harness/baseline-figures.js';
import type { EvalResult } from '../../src/harness/result.js';
import { checkTaskFolder, type CheckProblem } from '../../src/harness/task-check.js';
import { loadTask } from '../../src/harness/tasks.js';
import { runKernelseek } from '../support/cli.js';
import { createTempDir } from '../support/db.js';

/**
 * The strict task check: a task written with the mistakes new users make is refused with every
 * mistake at once, each with its file, line and a fix; the shipped tasks pass. No harness here
 * (`harness: undefined`): these are the checks that must not depend on it.
 */

const SOFTMAX = path.join(REPO_ROOT, 'kernels', 'cpu_softmax');
const PYTHON = { python: 'python3', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } };

let tmp: Awaited<ReturnType<typeof createTempDir>>;
beforeAll(async () => {
  tmp = await createTempDir('ks-task-check-');
});
afterAll(() => tmp.remove());

/** A copy of cpu_softmax named `name`, with `edit` applied to each of its files. */
async function variant(name: string, edit: { yaml?: (s: string) => string; reference?: (s: string) => string; baseline?: (s: string) => string }): Promise<string> {
  const dir = path.join(tmp.dir, name, name);
  await mkdir(path.dirname(dir), { recursive: true });
  await cp(SOFTMAX, dir, { recursive: true });
  const change = async (file: string, f?: (s: string) => string) => {
    if (!f) return;
    const before = await readFile(path.join(dir, file), 'utf8');
    const after = f(before);
    if (after === before) throw new Error(`the edit of ${file} changed nothing: fix the test`);
    await writeFile(path.join(dir, file), after);
  };
  await change('task.yaml', (s) => (edit.yaml ?? ((y) => y))(s.replace('name: cpu_softmax', `name: ${name}`)));
  await change('reference.py', edit.reference);
  await change('baseline.cpp', edit.baseline);
  return dir;
}

const find = (problems: CheckProblem[], field: string | RegExp, message: RegExp) =>
  problems.find((p) => (typeof field === 'string' ? p.field === field : field.test(p.field ?? '')) && message.test(p.message));

describe('tasks --check: every mistake at once, each with its file, line and fix', () => {
  it('passes the shipped tasks', async () => {
    for (const name of ['cpu_softmax', 'rmsnorm', 'flash_attn_fwd']) {
      const check = await checkTaskFolder(path.join(REPO_ROOT, 'kernels', name), PYTHON);
      expect(check.problems, name).toEqual([]);
    }
  });

  it('reports a misspelt dtype, a where that does not parse, reference.py functions missing or misdeclared and a baseline whose signature disagrees, in one check', async () => {
    const dir = await variant('many_mistakes', {
      yaml: (y) => y.replace('dtype: float32, role: output', 'dtype: f32, role: output').replace('where: "rows * cols <= 262144"', 'where: "rows * * cols <= 262144"'),
      reference: (r) => r.replace('def make_inputs(scenario, seed, device):', 'def make_input(scenario, seed, device):').replace('def lowp(inputs, scenario):', 'def lowp(inputs):'),
      baseline: (b) => b.replace('int64_t rows, int64_t cols)', 'int64_t rows, int32_t cols)'),
    });
    const { problems } = await checkTaskFolder(dir, PYTHON);
    const yaml = path.relative(process.cwd(), path.join(dir, 'task.yaml'));
    const dtype = find(problems, 'kernel.args[1].dtype', /'f32' is not one of float32/);
    expect(dtype).toMatchObject({ severity: 'error', file: yaml, fix: expect.stringMatching(/did you mean float32/) });
    expect(dtype!.line).toBe((await readFile(path.join(dir, 'task.yaml'), 'utf8')).split('\n').findIndex((l) => l.includes('dtype: f32')) + 1);
    expect(find(problems, 'scenarios.grid[0].where', /cannot evaluate "rows \* \* cols <= 262144"/)).toMatchObject({ severity: 'error', fix: expect.stringMatching(/params: rows, cols/) });
    expect(find(problems, '', /function make_inputs\(\) is not defined/) ?? find(problems, /.*/, /make_inputs\(\) is not defined/)).toMatchObject({ file: expect.stringMatching(/reference\.py$/), fix: expect.stringMatching(/def make_inputs\(scenario, seed, device\)/) });
    const lowp = find(problems, /.*/, /lowp\(\) takes 1 positional argument; the harness calls it with 2/);
    expect(lowp).toMatchObject({ file: expect.stringMatching(/reference\.py$/), line: expect.any(Number), fix: 'give it the signature def lowp(inputs, scenario):' });
    const sig = find(problems, 'kernel.args[3]', /parameter 4 of softmax_rows\(\) \(int32_t cols\) is int32_t, but the argument is int64/);
    expect(sig).toMatchObject({ severity: 'error', file: expect.stringMatching(/baseline\.cpp$/), line: expect.any(Number), fix: expect.stringMatching(/the harness calls extern "C" int softmax_rows\(const float\* x, \?\* y, int64_t rows, int64_t cols\)/) });
    expect(problems.filter((p) => p.severity === 'error').length).toBeGreaterThanOrEqual(5);
    for (const p of problems) expect(p.fix.length, JSON.stringify(p)).toBeGreaterThan(5);
  });

  it('gives the line of a syntax error in reference.py, and names a baseline without the entry point with what it exports', async () => {
    const dir = await variant('broken_reference', {
      reference: (r) => r.replace('def output_shapes(scenario):', 'def output_shapes(scenario)'),
      baseline: (b) => b.replace('int softmax_rows(', 'int softmax_row('),
    });
    const { problems } = await checkTaskFolder(dir, PYTHON);
    const line = (await readFile(path.join(dir, 'reference.py'), 'utf8')).split('\n').findIndex((l) => l.startsWith('def output_shapes')) + 1;
    expect(find(problems, /.*/, /^syntax error/)).toMatchObject({ file: expect.stringMatching(/reference\.py$/), line });
    expect(find(problems, 'kernel.entry', /no extern "C" function softmax_rows\(\)\. It exports softmax_row\(\)/)).toMatchObject({ fix: expect.stringMatching(/set kernel\.entry: softmax_row/) });
  });

  it('warns of a tolerance that cannot be met or lets anything pass, a goal the baseline meets already, and a name close to another task', async () => {
    const dir = await variant('cpu_sofmax', { yaml: (y) => y.replace('factor: 2.0', 'factor: 0.5').replace('goal: {vs: best_peer, speedup: 1.0}', 'goal: {vs: best_peer, speedup: 1.2}') });
    const loaded = (await loadTask(path.join(dir, 'task.yaml'))).task!;
    // The last figures of this very baseline: 1.5x torch.
    const result = { task: 'cpu_sofmax', device: 'cpu', gpu: null, scenarios: [{ id: 'a', baseline_ms: 1, peer_ms: { torch: 1.5 } }, { id: 'b', baseline_ms: 2, peer_ms: { torch: 3 } }] } as unknown as EvalResult;
    await recordBaselineFigures(tmp.dir, loaded, result);
    const { problems } = await checkTaskFolder(dir, { ...PYTHON, dataDir: tmp.dir, otherNames: ['cpu_softmax', 'rmsnorm'] });
    expect(problems.every((p) => p.severity === 'warning')).toBe(true);
    expect(find(problems, 'tolerance.factor', /more accurate than PyTorch/)).toBeDefined();
    expect(find(problems, 'goal.speedup', /already meets the goal: it is 1\.50x the fastest peer \(torch\)/)).toMatchObject({ fix: expect.stringMatching(/raise goal\.speedup above 1\.50/) });
    expect(find(problems, 'name', /'cpu_sofmax' is close to the task 'cpu_softmax': did you mean that one\?/)).toBeDefined();
    // The figures of another baseline say nothing about this one.
    await writeFile(path.join(dir, 'baseline.cpp'), `${await readFile(path.join(dir, 'baseline.cpp'), 'utf8')}\n// changed\n`);
    const after = await checkTaskFolder(dir, { ...PYTHON, dataDir: tmp.dir });
    expect(find(after.problems, 'goal.speedup', /already meets/)).toBeUndefined();
  });

  it('the CLI prints them with their fixes and exits 1; a mistyped task name gets "did you mean"', async () => {
    const dir = await variant('cli_mistakes', { yaml: (y) => y.replace('dtype: float32, role: input', 'dtype: fp16, role: input') });
    const r = await runKernelseek(['tasks', '--check', dir, '--no-harness'], { PATH: process.env.PATH, KERNELSEEK_DATA_DIR: tmp.dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/✗ cli_mistakes: 1 error/);
    expect(r.stdout).toMatch(/task\.yaml:\d+: kernel\.args\[0\]\.dtype: 'fp16' is not one of float32, float16, bfloat16, int32, int64\n\s+fix: did you mean float16\?/);
    const json = await runKernelseek(['tasks', '--check', dir, '--no-harness', '--json'], { PATH: process.env.PATH, KERNELSEEK_DATA_DIR: tmp.dir });
    expect(JSON.parse(json.stdout)).toMatchObject({ problems: [{ task: 'cli_mistakes', severity: 'error', field: 'kernel.args[0].dtype', fix: 'did you mean float16? (one of float32, float16, bfloat16, int32, int64)' }] });
    const ok = await runKernelseek(['tasks', '--check', SOFTMAX, '--no-harness'], { PATH: process.env.PATH, KERNELSEEK_DATA_DIR: tmp.dir });
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.stdout).toMatch(/✓ cpu_softmax: ok/);
    const run = await runKernelseek(['run', 'cpu_sofmax'], { PATH: process.env.PATH, KERNELSEEK_DATA_DIR: tmp.dir, ANTHROPIC_API_KEY: 'sk-ant-test-not-used' });
    expect(run, run.stderr).toMatchObject({ code: 1 });
    expect(run.stderr).toMatch(/Unknown task 'cpu_sofmax'\. Did you mean 'cpu_softmax'\?/);
  }, 60_000);

  it('refuses to start a run or an evaluation on a task with errors, naming them all', async () => {
    const dir = await variant('gate_mistakes', {
      reference: (r) => r.replace('def reference(inputs, scenario):', 'def reference(inputs, scenario, extra):'),
      baseline: (b) => b.replace('float* y,', 'const float* y,'),
    });
    const r = await runKernelseek(['eval', 'gate_mistakes', path.join(dir, 'baseline.cpp')], { PATH: process.env.PATH, KERNELSEEK_DATA_DIR: tmp.dir, KERNELSEEK_TASKS_DIR: path.dirname(dir) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Task 'gate_mistakes' has 2 problems to fix first/);
    expect(r.stderr).toMatch(/reference\(\) takes 3 positional arguments; the harness calls it with 2/);
    expect(r.stderr).toMatch(/parameter 2 of softmax_rows\(\) \(const float \* y\) is const, but the tensor is an output/);
  }, 60_000);
});
