import { setTimeout as delay } from 'node:timers/promises';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, REPO_ROOT, type Config } from '../../src/config/index.js';
import { UserInputError } from '../../src/core/errors.js';
import { EvalResultSchema } from '../../src/harness/result.js';
import { harnessEnvironment, runHarness } from '../../src/harness/runner.js';
import type { EvaluationProgress } from '../../src/harness/evaluation.js';
import { createTempDir } from '../support/db.js';

const FIXTURES = path.join(REPO_ROOT, 'test', 'queue', 'fixtures');
const BASELINE = path.join(REPO_ROOT, 'kernels', 'cpu_softmax', 'baseline.cpp');
const ENV = { PATH: process.env.PATH, HOME: process.env.HOME, ANTHROPIC_API_KEY: 'sk-ant-secret', SLACK_BOT_TOKEN: 'xoxb-secret' };
// The fastest real evaluation: one small scenario, no peers, no baseline.
const SMALL = { peers: false, baseline: false } as const;

/**
 * A stand-in `harness` package for what the real one must never do: hang with a grandchild, crash,
 * write an invalid result. It picks its behaviour from the task folder's name.
 */
const FAKE_HARNESS = `
import json, os, subprocess, sys, time
args = sys.argv[1:]
task = os.path.basename(args[args.index("--task-dir") + 1])
out = args[args.index("--json") + 1]
if task == "hang":
    child = subprocess.Popen(["sleep", "300"])
    open(os.environ["KERNELSEEK_DATA_DIR"] + "/grandchild.pid", "w").write(str(child.pid))
    sys.stderr.write(json.dumps({"event": "compile", "ok": True, "seconds": 0.1, "cached": False}) + "\\n")
    sys.stderr.flush()
    time.sleep(300)
elif task == "crash":
    sys.stderr.write("Traceback (most recent call last):\\n  File harness/evaluate.py\\nRuntimeError: boom in the harness\\n")
    sys.exit(1)
elif task == "garbage":
    open(out, "w").write(json.dumps({"schema": "kernelseek.eval/1", "status": "great"}))
elif task == "envdump":
    open(out, "w").write("{}")
    open(os.environ["KERNELSEEK_DATA_DIR"] + "/env.json", "w").write(json.dumps(dict(os.environ)))
`;

/** A process that exists and is not a zombie (killed orphans wait for init to reap them). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('runHarness with the real harness on cpu_softmax', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  let config: Config;
  beforeAll(async () => {
    tmp = await createTempDir('ks-runner-');
    config = loadConfig({ KERNELSEEK_DATA_DIR: tmp.dir });
  });
  afterAll(() => tmp.remove());

  it('evaluates the baseline: a valid kernelseek.eval/1 result, progress events, compile cache under the data dir', async () => {
    const progress: EvaluationProgress[] = [];
    const outcome = await runHarness(
      { task: 'cpu_softmax', source: await readFile(BASELINE, 'utf8'), fileName: 'kernel.cpp', scenarios: 'r7-c33', options: SMALL },
      { config, env: ENV, onProgress: (p) => progress.push(p) },
    );
    if (outcome.status === 'harness_error') throw new Error(outcome.message);
    expect(outcome.status).toBe('ok');
    expect(EvalResultSchema.safeParse(outcome.result).success).toBe(true);
    expect(outcome.result.correct).toBe(true);
    expect(outcome.result.scenarios.map((s) => s.id)).toEqual(['r7-c33']);
    expect(outcome.result.scenarios[0]!.time_ms).toBeGreaterThan(0);
    expect(progress.map((p) => p.phase)).toEqual(expect.arrayContaining(['compile', 'correctness', 'scenario', 'done']));
    expect(progress.find((p) => p.phase === 'scenario')).toMatchObject({ scenario: 'r7-c33', status: 'ok', i: 0, n: 1 });
    const cached = await import('node:fs/promises').then((fs) => fs.readdir(path.join(tmp.dir, 'compile-cache')));
    expect(cached.length).toBeGreaterThan(0);
  });

  it('reports a kernel that does not compile as compile_error with the compiler log', async () => {
    const outcome = await runHarness(
      { task: 'cpu_softmax', source: await readFile(path.join(FIXTURES, 'broken.cpp'), 'utf8'), fileName: 'kernel.cpp', scenarios: 'r7-c33', options: SMALL },
      { config, env: ENV },
    );
    expect(outcome.status).toBe('compile_error');
    if (outcome.status === 'harness_error') throw new Error(outcome.message);
    expect(outcome.result.correct).toBe(false);
    expect(outcome.result.compile.log).toContain('undeclared_variable');
  });

  it('refuses a file name or task name that would escape the temp folder, before running anything', async () => {
    await expect(runHarness({ task: 'cpu_softmax', source: 'x', fileName: '../kernel.cpp', scenarios: 'all' }, { config, env: ENV })).rejects.toThrow(UserInputError);
    await expect(runHarness({ task: '../etc', source: 'x', fileName: 'kernel.cpp', scenarios: 'all' }, { config, env: ENV })).rejects.toThrow(/not a task name/);
    await expect(runHarness({ task: 'cpu_softmax', source: 'x', fileName: 'kernel.cpp', scenarios: '--json=/etc/x' }, { config, env: ENV })).rejects.toThrow(/scenario selection/);
  });
});

describe('runHarness when the harness itself misbehaves', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  let config: Config;
  beforeAll(async () => {
    tmp = await createTempDir('ks-fake-harness-');
    const repo = path.join(tmp.dir, 'repo');
    await mkdir(path.join(repo, 'harness'), { recursive: true });
    await writeFile(path.join(repo, 'harness', '__init__.py'), '');
    await writeFile(path.join(repo, 'harness', '__main__.py'), FAKE_HARNESS);
    const base = loadConfig({ KERNELSEEK_DATA_DIR: path.join(tmp.dir, 'data') });
    config = { ...base, core: { ...base.core, repoRoot: repo, tasksDir: path.join(repo, 'kernels') } };
    await mkdir(config.core.dataDir, { recursive: true });
  });
  afterAll(() => tmp.remove());

  const request = (task: string) => ({ task, source: 'int x;', fileName: 'kernel.cpp', scenarios: 'all' });

  it('kills the whole process group at the hard time limit and says so', async () => {
    const started = Date.now();
    let pid = 0;
    const outcome = await runHarness({ ...request('hang'), options: { timeoutSeconds: 3 } }, { config, env: ENV, onSpawn: (p) => (pid = p) });
    expect(outcome.status).toBe('harness_error');
    if (outcome.status !== 'harness_error') return;
    expect(outcome.message).toMatch(/hard time limit of 3 s/);
    expect(Date.now() - started).toBeLessThan(15_000);
    const grandchild = Number(await readFile(path.join(config.core.dataDir, 'grandchild.pid'), 'utf8'));
    await delay(300);
    expect(alive(pid)).toBe(false);
    expect(alive(grandchild)).toBe(false);
  });

  it('turns a crash into harness_error with the end of stderr', async () => {
    const outcome = await runHarness(request('crash'), { config, env: ENV });
    expect(outcome).toMatchObject({ status: 'harness_error' });
    if (outcome.status !== 'harness_error') return;
    expect(outcome.message).toMatch(/exit status 1.*boom in the harness/);
    expect(outcome.stderrTail).toContain('Traceback');
  });

  it('turns a result that breaks the schema into harness_error naming the fields', async () => {
    const outcome = await runHarness(request('garbage'), { config, env: ENV });
    expect(outcome.status).toBe('harness_error');
    if (outcome.status !== 'harness_error') return;
    expect(outcome.message).toMatch(/does not match kernelseek.eval\/1/);
    expect(outcome.message).toMatch(/status/);
  });

  it('gives the harness (and so the candidate) no secrets from the environment, and pins the GPU', async () => {
    await runHarness(request('envdump'), { config, env: ENV, gpuIndex: 3 });
    const seen = JSON.parse(await readFile(path.join(config.core.dataDir, 'env.json'), 'utf8')) as Record<string, string>;
    expect(seen.ANTHROPIC_API_KEY).toBeUndefined();
    expect(seen.SLACK_BOT_TOKEN).toBeUndefined();
    expect(seen.CUDA_VISIBLE_DEVICES).toBe('3');
    expect(seen.CUDA_DEVICE_ORDER).toBe('PCI_BUS_ID');
    expect(seen.KERNELSEEK_DATA_DIR).toBe(config.core.dataDir);
    expect(seen.PATH).toBe(process.env.PATH);
    // Temp files land in the evaluation's own folder, which is gone afterwards.
    expect(seen.TMPDIR).toMatch(/kernelseek-candidate-[^/]+\/tmp$/);
    expect(existsSync(seen.TMPDIR!)).toBe(false);
    expect(harnessEnvironment(ENV, config).ANTHROPIC_API_KEY).toBeUndefined();
  });
});
