import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, REPO_ROOT, type Config } from '../../src/config/index.js';
import { createInProcessDispatcher } from '../../src/queue/in-process-dispatcher.js';
import { packWorkspace } from '../../src/queue/archive.js';
import { createTempDir } from '../support/db.js';

/**
 * A stand-in harness that records when it ran and writes a minimal valid result: enough to see
 * whether the in-process dispatcher lets two evaluations overlap, in milliseconds, not minutes.
 */
const RECORDING_HARNESS = `
import json, os, sys, time
args = sys.argv[1:]
out = args[args.index("--json") + 1]
log = os.environ["KERNELSEEK_DATA_DIR"] + "/runs.log"
start = time.time()
time.sleep(0.8)
open(log, "a").write(f"{start} {time.time()}\\n")
json.dump({"schema": "kernelseek.eval/1", "task": "cpu_softmax", "device": "cpu", "status": "ok", "correct": True,
           "harness_version": "fake-1",
           "summary": {"scenarios": 1, "correct": 1, "speedup_vs_baseline_geomean": 1.0, "speedup_vs_peer_geomean": {},
                       "best_peer": None, "pct_of_peak_median": None, "seconds": 0.8},
           "scenarios": [{"id": "r7-c33", "params": {"rows": 7, "cols": 33}, "correct": True}],
           "compile": {"seconds": 0.1, "log": ""}, "messages": []}, open(out, "w"))
`;

describe('createInProcessDispatcher', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  let config: Config;
  beforeAll(async () => {
    tmp = await createTempDir('ks-inproc-');
    const repo = path.join(tmp.dir, 'repo');
    await mkdir(path.join(repo, 'harness'), { recursive: true });
    await writeFile(path.join(repo, 'harness', '__init__.py'), '');
    await writeFile(path.join(repo, 'harness', '__main__.py'), RECORDING_HARNESS);
    await cp(path.join(REPO_ROOT, 'kernels', 'cpu_softmax'), path.join(repo, 'kernels', 'cpu_softmax'), { recursive: true });
    const base = loadConfig({ KERNELSEEK_DATA_DIR: path.join(tmp.dir, 'data') });
    config = { ...base, core: { ...base.core, repoRoot: repo, tasksDir: path.join(repo, 'kernels') } };
    await mkdir(config.core.dataDir, { recursive: true });
  });
  afterAll(() => tmp.remove());

  it('runs evaluations of one device one at a time, and labels them with a deterministic id', async () => {
    const dispatcher = createInProcessDispatcher(config, { env: { PATH: process.env.PATH } });
    const request = { task: 'cpu_softmax', source: 'int x;', fileName: 'kernel.cpp', scenarios: 'r7-c33' };
    const [a, b] = await Promise.all([dispatcher.evaluate({ ...request, runId: 'ks-local', seq: 1 }), dispatcher.evaluate({ ...request, runId: 'ks-local', seq: 2 })]);
    await dispatcher.close();
    expect(a).toMatchObject({ status: 'ok', jobId: 'eval:ks-local:1', worker: expect.stringMatching(/\/local$/) });
    expect(b).toMatchObject({ status: 'ok', jobId: 'eval:ks-local:2' });
    expect(a.executor?.harnessVersion).toBe('fake-1');
    const runs = (await readFile(path.join(config.core.dataDir, 'runs.log'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => l.split(' ').map(Number) as [number, number])
      .sort((x, y) => x[0] - y[0]);
    expect(runs).toHaveLength(2);
    expect(runs[1]![0]).toBeGreaterThanOrEqual(runs[0]![1]);
  });

  it('rejects an unknown task and a malformed request with the reason', async () => {
    const dispatcher = createInProcessDispatcher(config, { env: { PATH: process.env.PATH } });
    await expect(dispatcher.evaluate({ task: 'nope', source: 'x', fileName: 'kernel.cpp', scenarios: 'all' })).rejects.toThrow("Unknown task 'nope'");
    await expect(dispatcher.evaluate({ task: 'cpu_softmax', source: '', fileName: 'kernel.cpp', scenarios: 'all' })).rejects.toThrow('source: source is empty');
  });

  it('runs gpu_bash locally on the workspace snapshot', async () => {
    const ws = path.join(tmp.dir, 'ws');
    await mkdir(ws);
    await writeFile(path.join(ws, 'kernel.cpp'), 'int main() {}\n');
    const dispatcher = createInProcessDispatcher(config, { env: { PATH: process.env.PATH } });
    const r = await dispatcher.gpuBash({ runId: 'ks-local', seq: 1, command: 'ls && exit 4', archive: await packWorkspace(ws), timeoutSeconds: 10 });
    expect(r).toMatchObject({ exitCode: 4, timedOut: false, truncated: false, gpu: null });
    expect(r.output).toContain('kernel.cpp');
  });
});
