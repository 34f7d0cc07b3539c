import { cp, rm, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { loadTask, loadTaskCatalog } from '../../src/harness/tasks.js';
import { createTempDir } from '../support/db.js';

/**
 * One task.yaml format on both sides: the same broken files go to the TypeScript loader (ajv on
 * harness/schema/task.schema.json, then its cross-field checks) and to the Python harness
 * (harness/task/schema.py on the same file, then harness/task/model.py), and both must refuse each one,
 * naming the same field. Each case breaks one rule of the schema, or one a schema cannot express.
 */
const CASES: [string, (yaml: string) => string, string][] = [
  ['schema const', (y) => y.replace('schema: kernelseek.task/1', 'schema: kernelseek.task/9'), 'schema'],
  ['summary empty', (y) => y.replace(/^summary: .*$/m, 'summary: ""'), 'summary'],
  ['device enum', (y) => y.replace('device: cpu', 'device: tpu'), 'device'],
  ['architecture pattern', (y) => y.replace('architectures: []', 'architectures: [hopper]'), 'architectures[0]'],
  ['kernel file with a folder', (y) => y.replace('file: kernel.cpp', 'file: src/kernel.cpp'), 'kernel.file'],
  ['kernel file of the other language', (y) => y.replace('file: kernel.cpp', 'file: kernel.cu'), 'kernel.file'],
  ['entry pattern', (y) => y.replace('entry: softmax_rows', 'entry: 9bad'), 'kernel.entry'],
  ['no args', (y) => y.replace(/ {2}args:\n( {4}- .*\n)+/, '  args: []\n'), 'kernel.args'],
  ['dtype enum (float64 is not a harness dtype)', (y) => y.replace('dtype: float32, role: output', 'dtype: float64, role: output'), 'kernel.args[1].dtype'],
  ['tensor without role', (y) => y.replace('dtype: float32, role: output', 'dtype: float32'), 'kernel.args[1].role'],
  ['scalar without value', (y) => y.replace('{name: cols, kind: int64, value: "cols"}', '{name: cols, kind: int64}'), 'kernel.args[3].value'],
  ['params not a list', (y) => y.replace('params: [rows, cols]', 'params: rows'), 'scenarios.params'],
  ['tolerance without atol', (y) => y.replace(/^ {2}atol: .*\n/m, ''), 'tolerance.atol'],
  ['tolerance factor not positive', (y) => y.replace('factor: 2.0', 'factor: -1'), 'tolerance.factor'],
  ['empty metric', (y) => y.replace('flops: "5 * rows * cols"', 'flops: ""'), 'metrics.flops'],
  ['grid with no values', (y) => y.replace('cols: [128, 1024]', 'cols: []'), 'scenarios.grid[0].cols'],
  ['peak not positive', (y) => y.replace('gbps: 18.6', 'gbps: 0'), 'peak.gbps'],
  ['peer named baseline', (y) => y.replace('{name: torch, fn: peer_torch}', '{name: baseline, fn: peer_torch}'), 'peers[0].name'],
  ['goal vs unknown', (y) => y.replace('goal: {vs: best_peer', 'goal: {vs: fastest'), 'goal.vs'],
  ['min_reps below 3', (y) => y.replace(/min_reps: \d+/, 'min_reps: 1'), 'timing.min_reps'],
  ['cpu_threads 0', (y) => y.replace('cpu_threads: 1', 'cpu_threads: 0'), 'cpu_threads'],
  ['upstream without path', (y) => `${y}upstream: {repo: "https://github.com/acme/kernels.git"}\n`, 'upstream.path'],
  ['upstream path out of the repository', (y) => `${y}upstream: {repo: "https://github.com/acme/kernels.git", path: ../../x.cpp}\n`, 'upstream.path'],
  ['upstream path absolute', (y) => `${y}upstream: {repo: "https://github.com/acme/kernels.git", path: /etc/x.cpp}\n`, 'upstream.path'],
  ['upstream path into .git', (y) => `${y}upstream: {repo: "https://github.com/acme/kernels.git", path: k/.git/hooks/post-checkout}\n`, 'upstream.path'],
  ['upstream repo read as an option', (y) => `${y}upstream: {repo: "--upload-pack=touch x", path: k.cpp}\n`, 'upstream.repo'],
  // What a schema cannot say, checked in code on each side.
  ['cpu task in cuda', (y) => y.replace('language: cpp', 'language: cuda').replace('file: kernel.cpp', 'file: kernel.cu'), 'kernel.language'],
  ['duplicate argument', (y) => y.replace('{name: cols, kind: int64, value: "cols"}', '{name: rows, kind: int64, value: "cols"}'), 'kernel.args[3].name'],
  ['stream on a cpu task', (y) => y.replace('    - {name: cols, kind: int64, value: "cols"}\n', '    - {name: cols, kind: int64, value: "cols"}\n    - {name: s, kind: stream}\n'), 'kernel.args[4].kind'],
  ['best_peer without peers', (y) => y.replace(/^peers:\n {2}- .*\n/m, ''), 'goal.vs'],
  ['max_reps below min_reps', (y) => y.replace('max_reps: 200', 'max_reps: 5'), 'timing.max_reps'],
];

let work: { dir: string; remove(): Promise<void> };
const folders = new Map<string, string>();
beforeAll(async () => {
  work = await createTempDir('ks-task-schema-');
  const original = await readFile(path.join(REPO_ROOT, 'kernels/cpu_softmax/task.yaml'), 'utf8');
  for (const [i, [label, edit]] of CASES.entries()) {
    const changed = edit(original);
    if (changed === original) throw new Error(`case '${label}' changed nothing: fix its edit`);
    // Each case in its own kernels-like folder named as the task, so only the one rule breaks.
    const dir = path.join(work.dir, String(i), 'cpu_softmax');
    await cp(path.join(REPO_ROOT, 'kernels/cpu_softmax'), dir, { recursive: true });
    await writeFile(path.join(dir, 'task.yaml'), changed);
    folders.set(label, dir);
  }
  // Valid: where the kernel lives in the team's repository (`kernelseek pr`, docs/tasks.md).
  const dir = path.join(work.dir, 'upstream', 'cpu_softmax');
  await cp(path.join(REPO_ROOT, 'kernels/cpu_softmax'), dir, { recursive: true });
  await writeFile(path.join(dir, 'task.yaml'), `${original}upstream: {repo: "git@github.com:acme/kernels.git", path: kernels/cpu/, base: main, evidence: true}\n`);
  folders.set('upstream', dir);
});
afterAll(async () => work?.remove());

/** The harness's verdict on each folder: null when it loads (task and reference.py), else its message. */
async function pythonVerdicts(dirs: string[]): Promise<(string | null)[]> {
  const script = `
import json, sys
from harness.errors import TaskError
from harness.task.model import load_reference, load_task
out = []
for d in json.load(sys.stdin):
    try:
        load_reference(load_task(d)); out.append(None)
    except TaskError as e:
        out.append(e.detail)
print(json.dumps(out))`;
  const r = await execa('/usr/bin/python3', ['-c', script], { cwd: REPO_ROOT, input: JSON.stringify(dirs) });
  return JSON.parse(r.stdout) as (string | null)[];
}

describe('task.yaml: one schema, both sides', () => {
  it('both accept the shipped tasks, and one that says where its kernel lives in the team\'s repository (upstream)', async () => {
    const catalog = await loadTaskCatalog(path.join(REPO_ROOT, 'kernels'));
    expect(catalog.problems).toEqual([]);
    const names = catalog.tasks.map((t) => t.task.name);
    const upstream = folders.get('upstream')!;
    expect(await pythonVerdicts([...names.map((n) => path.join(REPO_ROOT, 'kernels', n)), upstream])).toEqual([...names.map(() => null), null]);
    const ts = await loadTask(path.join(upstream, 'task.yaml'));
    expect(ts.problems).toEqual([]);
    expect(ts.task!.task.upstream).toEqual({ repo: 'git@github.com:acme/kernels.git', path: 'kernels/cpu/', base: 'main', evidence: true });
  });

  it('both refuse each broken task.yaml, naming the same field', async () => {
    const labels = CASES.map(([label]) => label);
    const python = await pythonVerdicts(labels.map((l) => folders.get(l)!));
    for (const [i, [label, , field]] of CASES.entries()) {
      const ts = await loadTask(path.join(folders.get(label)!, 'task.yaml'));
      expect({ label, ts: ts.task === undefined }).toEqual({ label, ts: true });
      expect({ label, fields: ts.problems.map((p) => p.field) }).toEqual({ label, fields: expect.arrayContaining([field]) });
      const py = python[i];
      expect({ label, python: py?.startsWith(`${field}: `) ?? py }).toEqual({ label, python: true });
      // Where the schema decides, the two say it in the same words (the schema's x-message for patterns).
      const tsLine = ts.problems.find((p) => p.field === field)!;
      expect({ label, python: py }).toEqual({ label, python: `${field}: ${tsLine.message}` });
    }
  });

  it('both fill the same defaults for what a task may leave out (goal, metrics, peak)', async () => {
    const original = await readFile(path.join(REPO_ROOT, 'kernels/cpu_softmax/task.yaml'), 'utf8');
    const dir = path.join(work.dir, 'defaults', 'cpu_softmax');
    await cp(path.join(REPO_ROOT, 'kernels/cpu_softmax'), dir, { recursive: true });
    await writeFile(path.join(dir, 'task.yaml'), original.replace(/^(metrics:\n( {2}.*\n)+|peak: .*\n|goal: .*\n)/gm, '').replace(/^peers:\n {2}- .*\n/m, ''));
    const ts = await loadTask(path.join(dir, 'task.yaml'));
    expect(ts.problems).toEqual([]);
    expect(ts.task!.task.goal).toEqual({ vs: 'baseline', speedup: 1 });
    const r = await execa('/usr/bin/python3', ['-c', `import json; from harness.task.model import load_task; print(json.dumps(load_task(${JSON.stringify(dir)}).goal))`], { cwd: REPO_ROOT });
    expect(JSON.parse(r.stdout)).toEqual({ vs: 'baseline', speedup: 1 });
  });

  it('the schema file is what the Python side reads too', async () => {
    const r = await execa('/usr/bin/python3', ['-c', 'from harness.task.schema import SCHEMA_PATH; print(SCHEMA_PATH)'], { cwd: REPO_ROOT });
    expect(r.stdout).toBe(path.join(REPO_ROOT, 'harness/schema/task.schema.json'));
    await rm(path.join(work.dir, 'nothing'), { force: true });
  });
});
