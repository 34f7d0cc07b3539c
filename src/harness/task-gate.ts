import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { CoreConfig } from '../config/modules/core.js';
import type { HarnessConfig } from '../config/modules/harness.js';
import type { Env } from '../config/index.js';
import { describeError, UserInputError } from '../core/errors.js';
import { harnessEnvironment } from './runner.js';
import { resolvePython } from './runner-python.js';
import { checkTaskFolder, formatCheckProblem, type TaskCheck } from './task-check.js';
import type { LoadedTask } from './tasks.js';

/**
 * Where the task check meets the configuration: `tasks --check` (every task of a folder, with the
 * harness's own check) and the gate before a run or an evaluation (the fast checks only: task.yaml,
 * the Python files parsed, the baseline's entry point; no torch).
 */

interface GateConfig {
  core: CoreConfig;
  harness: HarnessConfig;
}

async function taskNames(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const names: string[] = [];
  for (const e of entries) if (e.isDirectory() && (await stat(path.join(dir, e.name, 'task.yaml')).catch(() => undefined))) names.push(e.name);
  return names.sort();
}

/** The task folders at `target`: itself when it holds task.yaml, else its sub-folders that do. */
export async function taskFoldersAt(target: string): Promise<string[]> {
  const st = await stat(target).catch(() => undefined);
  if (!st) throw new UserInputError(`${target} does not exist: give a task folder (with task.yaml) or a folder of tasks.`, { code: 'tasks_dir' });
  if (!st.isDirectory()) {
    if (path.basename(target) === 'task.yaml') return [path.dirname(target)];
    throw new UserInputError(`${target} is not a folder: give a task folder (with task.yaml) or a folder of tasks.`, { code: 'tasks_dir' });
  }
  if (await stat(path.join(target, 'task.yaml')).catch(() => undefined)) return [target];
  return (await taskNames(target)).map((n) => path.join(target, n));
}

/** The python3 that parses the Python files: the harness's when configured, else python3 on PATH. */
function probePython(config: GateConfig): string {
  return config.harness.python ?? 'python3';
}

/** Checks every task at `target` (all problems of each), with the harness's check where it can run. */
export async function checkTasksAt(target: string, options: { config: GateConfig; env: Env; harness: boolean }): Promise<{ checks: TaskCheck[]; notes: string[] }> {
  const { config } = options;
  const folders = await taskFoldersAt(target);
  const env = harnessEnvironment(options.env, config);
  const names = new Set([...(await taskNames(config.core.tasksDir)), ...folders.map((f) => path.basename(f))]);
  const notes: string[] = [];
  let harness: NonNullable<Parameters<typeof checkTaskFolder>[1]>['harness'];
  if (options.harness && folders.length > 0) {
    try {
      const python = (await resolvePython(config.harness.python, env)).path;
      harness = { python, repoRoot: config.core.repoRoot, env };
    } catch (error) {
      notes.push(`the harness's own check (it imports reference.py and runs it) was skipped: ${describeError(error)}`);
    }
  }
  const checks: TaskCheck[] = [];
  for (const dir of folders) {
    const others = [...names].filter((n) => n !== path.basename(dir));
    checks.push(await checkTaskFolder(dir, { otherNames: others, python: probePython(config), env, dataDir: config.core.dataDir, ...(harness ? { harness } : {}) }));
  }
  return { checks, notes };
}

/**
 * Refuses to start a run or an evaluation on a task with errors, naming every one with its fix.
 * Warnings are returned for the caller to show. Near names are not checked here: the task was found
 * by its exact name.
 */
export async function assertTaskReady(loaded: LoadedTask, options: { config: GateConfig; env: Env }): Promise<TaskCheck> {
  const env = harnessEnvironment(options.env, options.config);
  const check = await checkTaskFolder(loaded.dir, { python: probePython(options.config), env, dataDir: options.config.core.dataDir });
  const errors = check.problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) {
    throw new UserInputError(`Task '${check.name}' has ${errors.length} problem${errors.length === 1 ? '' : 's'} to fix first (\`kernelseek tasks --check\` shows them too):\n${errors.map(formatCheckProblem).join('\n')}`, { code: 'task_invalid' });
  }
  return check;
}
