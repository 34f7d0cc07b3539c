import { statfs } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { probeSandbox, DEFAULT_HOST_PATH } from '../agent/tools/sandbox-run.js';
import { loadTaskCatalog } from '../harness/tasks.js';
import { computeHarnessVersion } from '../queue/harness-version.js';
import type { CheckContext, CheckLine } from './types.js';

const GiB = 2 ** 30;

/** The environment a probe runs with: PATH as the service has it, nothing secret. */
export function probeEnv(ctx: CheckContext): Record<string, string> {
  return { PATH: ctx.env.PATH ?? DEFAULT_HOST_PATH, ...(ctx.env.LD_LIBRARY_PATH ? { LD_LIBRARY_PATH: ctx.env.LD_LIBRARY_PATH } : {}), ...(ctx.env.CUDA_HOME ? { CUDA_HOME: ctx.env.CUDA_HOME } : {}) };
}

/** The first line a program prints for `--version`, or why it did not run. */
export async function versionOf(program: string, args: string[], env: Record<string, string>): Promise<{ ok: true; text: string } | { ok: false; why: string }> {
  const r = await execa(program, args, { env, extendEnv: false, reject: false, timeout: 20_000, stdin: 'ignore' });
  if ((r as { code?: string }).code === 'ENOENT') return { ok: false, why: `${program} not found on PATH` };
  if (r.exitCode !== 0) return { ok: false, why: `${program} ${args.join(' ')} failed: ${String(r.stderr || r.stdout).trim().split('\n')[0] ?? ''}` };
  return { ok: true, text: String(r.stdout || r.stderr).trim() };
}

/** Free space where the process writes: the data dir (database, workspaces, caches) and the temp folder (jobs). */
export async function checkDisk(ctx: CheckContext): Promise<CheckLine[]> {
  if (!ctx.config) return [];
  const places = [{ what: 'data dir', dir: ctx.config.core.dataDir }];
  if (ctx.parts.has('worker')) places.push({ what: 'temp folder', dir: os.tmpdir() });
  const lines: CheckLine[] = [];
  for (const { what, dir } of places) {
    // The data dir may not exist yet (created on first use): look at the nearest folder that does.
    let at = dir;
    let info;
    for (;;) {
      info = await statfs(at).catch(() => undefined);
      if (info || path.dirname(at) === at) break;
      at = path.dirname(at);
    }
    if (!info) continue;
    const free = info.bavail * info.bsize;
    const shown = `${(free / GiB).toFixed(1)} GiB free for the ${what} (${dir})`;
    if (free < GiB) lines.push({ status: 'fail', name: 'disk', detail: shown, fix: `free space on that disk, or point ${what === 'data dir' ? 'KERNELSEEK_DATA_DIR' : 'TMPDIR'} at a larger one` });
    else if (free < 10 * GiB) lines.push({ status: 'warn', name: 'disk', detail: `${shown}: workspaces, compile caches and evaluations need more over time`, fix: 'keep 10 GiB or more free' });
    else lines.push({ status: 'ok', name: 'disk', detail: shown });
  }
  return lines;
}

/** git: every run's workspace is a git repository. */
export async function checkGit(ctx: CheckContext): Promise<CheckLine[]> {
  const v = await versionOf('git', ['--version'], probeEnv(ctx));
  return [v.ok ? { status: 'ok', name: 'git', detail: v.text } : { status: 'fail', name: 'git', detail: v.why, fix: 'install git (apt-get install git)' }];
}

/** g++: cpu tasks compile with it, and nvcc needs it as the host compiler. */
export async function checkCompiler(ctx: CheckContext): Promise<CheckLine[]> {
  const v = await versionOf('g++', ['--version'], probeEnv(ctx));
  return [v.ok ? { status: 'ok', name: 'g++', detail: v.text.split('\n')[0]! } : { status: 'fail', name: 'g++', detail: v.why, fix: 'install g++ (apt-get install g++): the harness compiles cpu candidates with it, and nvcc uses it as host compiler' }];
}

/** bubblewrap and user namespaces: the sandbox's own self-test (src/agent/tools/sandbox-run.ts). */
export async function checkSandbox(ctx: CheckContext): Promise<CheckLine[]> {
  if (!ctx.config || ctx.config.agent.sandbox.mode === 'off') return [];
  const hostPath = ctx.config.agent.bash.env.PATH ?? DEFAULT_HOST_PATH;
  const probe = probeSandbox(hostPath);
  const where = ctx.parts.has('worker') ? 'gpu_bash commands' : "the agent's commands";
  return [
    probe.ok
      ? { status: 'ok', name: 'sandbox', detail: `bubblewrap works: a command inside runs as an unprivileged uid with no network (${where} run there)` }
      : {
          status: 'fail',
          name: 'sandbox',
          detail: `${probe.why}: ${where} would be refused`,
          fix: 'install bubblewrap and util-linux (apt-get install bubblewrap util-linux); allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 also kernel.apparmor_restrict_unprivileged_userns=0); in a container, run it with seccomp=unconfined (docs/deploy.md). KERNELSEEK_SANDBOX=off only on a machine you do not care about',
        },
  ];
}

/** The harness version this process evaluates with (a worker) or sends jobs for (serve). */
export async function checkHarness(ctx: CheckContext): Promise<CheckLine[]> {
  if (!ctx.config) return [];
  try {
    const v = await computeHarnessVersion(ctx.config.core.repoRoot);
    const role = ctx.parts.has('worker') ? 'takes jobs only from the queues of this version' : 'sends jobs to the workers of this version';
    return [{ status: 'ok', name: 'harness', detail: `${v.version} (${v.files} files under ${path.join(ctx.config.core.repoRoot, 'harness')}); ${role}` }];
  } catch (error) {
    return [{ status: 'fail', name: 'harness', detail: `cannot read the harness of ${ctx.config.core.repoRoot}: ${(error as Error).message}`, fix: 'run KernelSeek from a whole checkout (or the container image)' }];
  }
}

/** The task folders: valid for serve (runs start from them); for a worker only shown, since jobs bring their task. */
export async function checkTasks(ctx: CheckContext): Promise<CheckLine[]> {
  if (!ctx.config) return [];
  const dir = ctx.config.core.tasksDir;
  const catalog = await loadTaskCatalog(dir);
  const worker = ctx.parts.has('worker') && ctx.parts.size === 1;
  const lines: CheckLine[] = [];
  const names = catalog.tasks.map((t) => t.task.name);
  if (names.length > 0) lines.push({ status: 'ok', name: 'tasks', detail: `${names.length} in ${dir}: ${names.join(', ')}${worker ? ' (jobs bring their own task; these are not needed)' : ''}` });
  for (const p of catalog.problems.slice(0, 5)) {
    lines.push({ status: worker ? 'warn' : 'fail', name: 'tasks', detail: `${p.file}${p.line ? `:${p.line}` : ''}: ${p.field ? `${p.field}: ` : ''}${p.message}`, fix: 'fix the task folder (kernelseek tasks shows every problem), or set KERNELSEEK_TASKS_DIR' });
  }
  if (names.length === 0 && catalog.problems.length === 0 && !worker) lines.push({ status: 'warn', name: 'tasks', detail: `no task in ${dir}: no run can start`, fix: 'add task folders (docs/tasks.md) or set KERNELSEEK_TASKS_DIR' });
  return lines;
}
