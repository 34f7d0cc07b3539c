import { mkdir, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Config, Env } from '../config/index.js';
import { DEFAULT_HOST_PATH, giveToSandbox, prepareMountPoints, probeSandbox } from '../agent/tools/sandbox-run.js';
import { gpuDeviceNodes, sandboxArgv, sandboxEnvironment, sandboxLimits, sandboxOwner, SANDBOX_HOME, toolchainFolders, type Owner, type SandboxSpec } from '../agent/tools/sandbox.js';
import { safeToolText } from '../agent/tools/output-cap.js';
import { AppError } from '../core/errors.js';
import { removeTree } from '../core/safe-read.js';
import { runGuarded } from '../harness/process-group.js';
import { extractArchive } from './archive.js';

export const DEFAULT_OUTPUT_CAP_BYTES = 64 * 1024;
export const GPU_BASH_DIR_PREFIX = 'kernelseek-gpu-bash-';

export interface GpuBashRun {
  command: string;
  archive: Buffer;
  timeoutSeconds: number;
  outputCapBytes?: number;
  /** Pins the command to one GPU; null on a CPU slot. */
  gpuIndex: number | null;
  signal?: AbortSignal;
}

export interface GpuBashRunResult {
  exitCode: number | null;
  output: string;
  truncated: boolean;
  timedOut: boolean;
  durationMs: number;
}

/**
 * The whole environment a gpu_bash command gets: a PATH, a HOME and a TMPDIR of its own, a locale
 * and its GPU.
 * Nothing from the worker's environment (Redis URL, API keys, tokens) reaches it.
 */
export function gpuBashEnvironment(env: Env, home: string, gpuIndex: number | null, tmp?: string): Record<string, string> {
  const out: Record<string, string> = {
    PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    LANG: env.LANG ?? 'C.UTF-8',
  };
  // Inside the job's folder, so that whatever the command leaves in /tmp goes with it.
  if (tmp) out.TMPDIR = tmp;
  if (gpuIndex !== null) {
    out.CUDA_VISIBLE_DEVICES = String(gpuIndex);
    // nvidia-smi's numbering (PCI bus order), which is how GPUs are assigned to slots.
    out.CUDA_DEVICE_ORDER = 'PCI_BUS_ID';
  }
  return out;
}

/**
 * The sandbox of a gpu_bash command on this host: the snapshot read-write at /workspace, a HOME of
 * its own, the toolchains read-only, the NVIDIA device nodes where this host has them (CUDA_VISIBLE_DEVICES
 * picks the slot's GPU), no network: the worker's Redis, its environment and its /proc are out of reach.
 */
export function gpuBashSandbox(config: Config, env: Env, dirs: { workspace: string; home: string }, gpuIndex: number | null, owner: Owner | null = null): SandboxSpec {
  const gpu = gpuDeviceNodes().length > 0;
  const inner = gpuBashEnvironment(env, SANDBOX_HOME, gpuIndex, '/tmp');
  return {
    workspace: dirs.workspace,
    home: dirs.home,
    env: sandboxEnvironment({ ...config.agent.bash.env, PATH: inner.PATH!, LANG: inner.LANG! }, config.harness, inner),
    gpu,
    readOnly: toolchainFolders(config.harness, [env.CUDA_HOME, env.CUDA_PATH, '/opt/nvidia']),
    limits: sandboxLimits(config.agent, gpu),
    owner,
  };
}

/**
 * Runs `bash -c <command>` in a fresh copy of the workspace snapshot, in the sandbox (unless
 * KERNELSEEK_SANDBOX=off), with a time limit that kills everything it started, and an output cap that
 * keeps the head and the tail of stdout and stderr (interleaved as they arrived). The temp folder
 * is removed afterwards.
 */
export async function runGpuBash(run: GpuBashRun, env: Env, config: Config): Promise<GpuBashRunResult> {
  const sandboxed = config.agent.sandbox.mode === 'on';
  if (sandboxed) {
    const probe = probeSandbox(env.PATH ?? DEFAULT_HOST_PATH);
    if (!probe.ok) {
      const output = `[gpu_bash is disabled on this host: the sandbox is unavailable (${probe.why}); install bubblewrap or set KERNELSEEK_SANDBOX=off]\n`;
      return { exitCode: null, output, truncated: false, timedOut: false, durationMs: 0 };
    }
  }
  const root = await mkdtemp(path.join(os.tmpdir(), GPU_BASH_DIR_PREFIX));
  try {
    const workspace = path.join(root, 'workspace');
    const home = path.join(root, 'home');
    const tmp = path.join(root, 'tmp');
    await Promise.all([mkdir(workspace), mkdir(home), mkdir(tmp)]);
    try {
      await extractArchive(run.archive, workspace);
    } catch (error) {
      // A snapshot refused (too big expanded, not an archive, a member that is not a file): that one
      // call fails with the reason; the run goes on.
      if (error instanceof AppError && error.code.startsWith('archive_')) {
        return { exitCode: null, output: `[gpu_bash did not run: ${error.userMessage}]\n`, truncated: false, timedOut: false, durationMs: 0 };
      }
      throw error;
    }
    let argv = ['bash', '-lc', run.command];
    let childEnv = gpuBashEnvironment(env, home, run.gpuIndex, tmp);
    if (sandboxed) {
      // A uid of this call's own (its folder's name is random): nothing of another call or run is its.
      const spec = gpuBashSandbox(config, env, { workspace, home }, run.gpuIndex, sandboxOwner(root));
      await giveToSandbox(spec.owner ?? null, [workspace, home]);
      await prepareMountPoints(spec);
      argv = sandboxArgv(spec, run.command);
      // Only for finding prlimit and bwrap (a GPU host carries bwrap outside /usr).
      childEnv = { PATH: env.PATH ?? DEFAULT_HOST_PATH };
    }
    const r = await runGuarded(argv[0]!, argv.slice(1), {
      cwd: workspace,
      env: childEnv,
      timeoutMs: run.timeoutSeconds * 1000,
      signal: run.signal,
      outputCapBytes: run.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES,
      mergeOutput: true,
    });
    let output = r.stdout;
    if (r.timedOut) output += `\n[killed: the command ran past its ${run.timeoutSeconds} s limit]\n`;
    else if (r.aborted) output += '\n[killed: the worker was shutting down]\n';
    return { exitCode: r.exitCode, output: safeToolText(output), truncated: r.stdoutTruncated, timedOut: r.timedOut, durationMs: r.durationMs };
  } finally {
    // Its files are the command's: removed without following any link it made.
    await removeTree(root);
  }
}
