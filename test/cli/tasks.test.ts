import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { createTempDir } from '../support/db.js';
import { runKernelseek } from '../support/cli.js';
import { REPO_ROOT } from '../../src/config/index.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function taskYaml(name: string, patch: (s: string) => string = (s) => s): string {
  return patch(`schema: kernelseek.task/1
name: ${name}
summary: Row-wise softmax of a float32 matrix.
device: cpu
kernel:
  language: cpp
  file: kernel.cpp
  baseline: baseline.cpp
  entry: softmax_rows
  args:
    - {name: x, kind: tensor, dtype: float32, role: input}
    - {name: y, kind: tensor, dtype: float32, role: output}
    - {name: rows, kind: int64, value: rows}
    - {name: cols, kind: int64, value: cols}
scenarios:
  params: [rows, cols]
  grid:
    - {rows: [1, 64, 1000], cols: [128, 1024], where: "rows*cols <= 100_000"}
  list:
    - {rows: 7, cols: 33}
  id: "r{rows}-c{cols}"
  quick: ["r64-c128"]
tolerance: {rule: lowp_relative, factor: 2.0, atol: 1.0e-6}
metrics: {flops: "5*rows*cols", bytes: "8*rows*cols"}
peak: {tflops: 1.0, gbps: 20.0}
peers:
  - {name: torch, fn: peer_torch}
goal: {vs: best_peer, speedup: 1.0}
denylist: [torch]
`);
}

async function makeTasksDir(tasks: Record<string, string>): Promise<string> {
  const tmp = await createTempDir('ks-tasks-');
  cleanups.push(tmp.remove);
  for (const [name, yaml] of Object.entries(tasks)) {
    await mkdir(path.join(tmp.dir, name), { recursive: true });
    await writeFile(path.join(tmp.dir, name, 'task.yaml'), yaml);
    await writeFile(path.join(tmp.dir, name, 'baseline.cpp'), '// baseline\n');
    await writeFile(path.join(tmp.dir, name, 'reference.py'), '# reference\n');
  }
  return tmp.dir;
}

describe('kernelseek tasks', () => {
  it('prints a JSON array of valid tasks with their scenario counts', async () => {
    const dir = await makeTasksDir({ alpha: taskYaml('alpha'), beta: taskYaml('beta') });
    const result = await runKernelseek(['tasks', '--json'], { KERNELSEEK_TASKS_DIR: dir });
    expect(result.code).toBe(0);
    const tasks = JSON.parse(result.stdout) as { name: string; scenarios: number; quick: number; device: string }[];
    expect(tasks.map((t) => t.name)).toEqual(['alpha', 'beta']);
    // grid: 1x128, 1x1024, 64x128, 64x1024; 1000x128 and 1000x1024 filtered out by where; plus the list entry
    expect(tasks[0]).toMatchObject({ scenarios: 5, quick: 1, device: 'cpu' });
  });

  it('reports a bad field with its file, line and fix, and still lists the valid tasks', async () => {
    const dir = await makeTasksDir({
      alpha: taskYaml('alpha'),
      broken: taskYaml('broken', (s) => s.replace('dtype: float32, role: output', 'dtype: float33, role: output')),
      gamma: taskYaml('gamma', (s) => s.replace('quick: ["r64-c128"]', 'quick: ["r64-c999"]')),
      notyaml: 'schema: [unclosed\n',
    });
    const result = await runKernelseek(['tasks', '--json'], { KERNELSEEK_TASKS_DIR: dir });
    expect(result.code).toBe(1);
    expect((JSON.parse(result.stdout) as { name: string }[]).map((t) => t.name)).toEqual(['alpha']);
    const brokenFile = path.relative(process.cwd(), path.join(dir, 'broken', 'task.yaml'));
    expect(result.stderr).toContain(`${brokenFile}:12: kernel.args[1].dtype: 'float33' is not one of float32, float16`);
    expect(result.stderr).toMatch(/gamma\/task\.yaml:\d+: scenarios\.quick: unknown scenario ids: r64-c999/);
    expect(result.stderr).toMatch(/notyaml\/task\.yaml:\d+: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a \]\n/);
  });

  it('refuses a task folder without reference.py, naming the file the harness needs', async () => {
    const dir = await makeTasksDir({ alpha: taskYaml('alpha'), noref: taskYaml('noref') });
    await rm(path.join(dir, 'noref', 'reference.py'));
    const result = await runKernelseek(['tasks', '--json'], { KERNELSEEK_TASKS_DIR: dir });
    expect(result.code).toBe(1);
    expect((JSON.parse(result.stdout) as { name: string }[]).map((t) => t.name)).toEqual(['alpha']);
    expect(result.stderr).toMatch(/noref\/task\.yaml: \S*noref\/reference\.py not found: a task folder needs reference\.py next to task\.yaml/);
    // A folder of that name is not the file either.
    await mkdir(path.join(dir, 'noref', 'reference.py'));
    expect((await runKernelseek(['tasks'], { KERNELSEEK_TASKS_DIR: dir })).code).toBe(1);
    const evaluated = await runKernelseek(['eval', 'noref', path.join(dir, 'noref', 'baseline.cpp')], { KERNELSEEK_TASKS_DIR: dir });
    expect(evaluated.code).toBe(1);
    expect(evaluated.stderr).toMatch(/^error: Task 'noref' is invalid:\n.*reference\.py not found/);
  });

  it('reports a where-expression that names an unknown parameter', async () => {
    const dir = await makeTasksDir({ bad: taskYaml('bad', (s) => s.replace('rows*cols <= 100_000', 'rows*colz <= 100_000')) });
    const result = await runKernelseek(['tasks'], { KERNELSEEK_TASKS_DIR: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("scenarios: cannot evaluate \"rows*colz <= 100_000\": unknown name 'colz'");
  });

  it('lists the shipped tasks through the installed bin', async () => {
    const result = await execa(path.join(REPO_ROOT, 'bin', 'kernelseek.js'), ['tasks', '--json'], { reject: false, env: { KERNELSEEK_TASKS_DIR: '' } });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(Array.isArray(JSON.parse(result.stdout))).toBe(true);
  });
});
