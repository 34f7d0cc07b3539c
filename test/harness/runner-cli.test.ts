import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { EvalResultSchema } from '../../src/harness/result.js';
import { runKernelseek } from '../support/cli.js';
import { createTempDir } from '../support/db.js';

const BASELINE = path.join(REPO_ROOT, 'kernels', 'cpu_softmax', 'baseline.cpp');
const WRONG = path.join(REPO_ROOT, 'test', 'queue', 'fixtures', 'wrong.cpp');

describe('kernelseek eval (in process, the real harness on cpu_softmax)', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  let env: Record<string, string | undefined>;
  beforeAll(async () => {
    tmp = await createTempDir('ks-eval-cli-');
    env = { PATH: process.env.PATH, HOME: process.env.HOME, KERNELSEEK_DATA_DIR: tmp.dir };
  });
  afterAll(() => tmp.remove());

  it('prints the per-scenario table and the summary, exits 0 for a correct kernel, and keeps the JSON with --out', async () => {
    const out = path.join(tmp.dir, 'result.json');
    const r = await runKernelseek(['eval', 'cpu_softmax', BASELINE, '--scenarios', 'r7-c33,r64-c128', '--out', out], env);
    expect(r.code).toBe(0);
    const saved = EvalResultSchema.parse(JSON.parse(await readFile(out, 'utf8')));
    expect(saved.scenarios.map((s) => s.id).sort()).toEqual(['r64-c128', 'r7-c33']);
    expect(saved).toMatchObject({ task: 'cpu_softmax', status: 'ok', correct: true });
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^scenario\s+status\s+max err\s+tolerance\s+ms\s+baseline ms\s+vs base\s+best peer ms\s+vs peer\s+TFLOP\/s\s+GB\/s\s+% peak$/);
    // A cpu task's TFLOP/s would read 0.000: a dash, and its GB/s in three significant digits.
    expect(r.stdout).toMatch(/\nr7-c33\s+ok(\s+\S+){5}\s+\S+ torch\s+[\d.]+x\s+—\s+\d\.\d\d+\s+[\d.]+%$/m);
    expect(r.stdout).toMatch(/\nr7-c33\s+ok\s+[\d.e-]+\s+[\d.e-]+\s+[\d.]+\s+[\d.]+\s+[\d.]+x\s+[\d.]+ torch\s+[\d.]+x/);
    expect(r.stdout).toMatch(/\nr64-c128\s+ok/);
    expect(r.stdout).toMatch(/cpu_softmax: ok — CORRECT on 2\/2 scenarios \([\d.]+ s in the harness: build [\d.]+ s, start [\d.]+ s, correctness [\d.]+ s, timing [\d.]+ s(, waiting for the peers [\d.]+ s)?\)/);
    expect(r.stdout).toMatch(/speedup vs baseline \(geomean\): [\d.]+x/);
    expect(r.stdout).toMatch(/speedup vs peers \(geomean\): torch [\d.]+x; fastest peer: torch/);
    expect(r.stdout).toMatch(/ran on: .*\/local \(cpu, harness \d/);
    // Not a terminal: progress as plain lines on stderr, one per scenario.
    expect(r.stderr).toMatch(/\[1\/2\] \S+ ok [\d.]+ ms/);
    expect(r.stderr).toMatch(/\[2\/2\] \S+ ok [\d.]+ ms/);
  }, 120_000);

  it('--json prints only the result, which validates against kernelseek.eval/1; an incorrect kernel exits 1', async () => {
    const r = await runKernelseek(['eval', 'cpu_softmax', WRONG, '--scenarios', 'r7-c33', '--json', '--no-peers', '--no-baseline'], env);
    expect(r.code).toBe(1);
    const parsed = EvalResultSchema.safeParse(JSON.parse(r.stdout));
    expect(parsed.success).toBe(true);
    expect(parsed.data).toMatchObject({ task: 'cpu_softmax', status: 'incorrect', correct: false });
    expect(parsed.data!.scenarios[0]).toMatchObject({ id: 'r7-c33', correct: false });
    expect(r.stderr).toBe('');
  }, 120_000);

  it('says precisely what is wrong with the input, before running anything', async () => {
    const cases: [string[], string | RegExp][] = [
      [['eval', 'cpu_softmaxx', BASELINE], /^error: Unknown task 'cpu_softmaxx'\. Did you mean 'cpu_softmax'\? Available tasks: (\w+, )*cpu_softmax(, \w+)*\.$/],
      [['eval', 'cpu_softmax', 'missing.cpp'], `Kernel file not found: ${path.join(REPO_ROOT, 'missing.cpp')}`],
      [['eval', 'cpu_softmax', 'kernel.cu'], 'cpu_softmax is a cpu task: the kernel must be a .cpp or .cc or .cxx file (got kernel.cu; the task\'s own is kernel.cpp).'],
      [['eval', 'cpu_softmax', BASELINE, '--device', 'cuda'], 'cpu_softmax runs on cpu; --device cuda is not possible.'],
      [['eval', 'cpu_softmax', BASELINE, '--arch', 'sm_90'], '--arch chooses the GPU workers and needs --remote.'],
      [['eval', 'cpu_softmax', BASELINE, '--seeds', '1'], '--seeds 1: give a whole number of at least 2.'],
      [['eval', 'cpu_softmax', BASELINE, '--timeout', 'soon'], '--timeout soon: give a duration such as 90s, 10m or 1h.'],
      [['eval', 'cpu_softmax', BASELINE, '--out', 'nowhere/r.json'], `--out ${path.join(REPO_ROOT, 'nowhere', 'r.json')}: the folder ${path.join(REPO_ROOT, 'nowhere')} does not exist.`],
    ];
    for (const [args, message] of cases) {
      const r = await runKernelseek(args, env, { cwd: REPO_ROOT });
      expect(r.code, args.join(' ')).toBe(1);
      if (typeof message === 'string') expect(r.stderr.trim()).toBe(`error: ${message}`);
      else expect(r.stderr.trim()).toMatch(message);
      expect(r.stdout).toBe('');
    }
  });

  it('documents the exit status in --help', async () => {
    const r = await runKernelseek(['eval', '--help'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Exit status: 0 when the candidate is correct on every selected scenario; 1 otherwise/);
    expect(r.stdout).toContain('--remote');
  });
});
