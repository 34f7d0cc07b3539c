import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Env } from '../config/index.js';
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
 * Runs `bash -lc <command>` in a fresh copy of the workspace snapshot, with a scrubbed environment,
 * a time limit that kills the whole process group, and an output cap that keeps the head and the
 * tail of stdout and stderr (interleaved as they arrived). The temp folder is removed afterwards.
 */
export async function runGpuBash(run: GpuBashRun, env: Env): Promise<GpuBashRunResult> {
  const root = await mkdtemp(path.join(os.tmpdir(), GPU_BASH_DIR_PREFIX));
  try {
    const workspace = path.join(root, 'workspace');
    const home = path.join(root, 'home');
    const tmp = path.join(root, 'tmp');
    await Promise.all([mkdir(workspace), mkdir(home), mkdir(tmp)]);
    await extractArchive(run.archive, workspace);
    const r = await runGuarded('bash', ['-lc', run.command], {
      cwd: workspace,
      env: gpuBashEnvironment(env, home, run.gpuIndex, tmp),
      timeoutMs: run.timeoutSeconds * 1000,
      signal: run.signal,
      outputCapBytes: run.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES,
      mergeOutput: true,
    });
    let output = r.stdout;
    if (r.timedOut) output += `\n[killed: the command ran past its ${run.timeoutSeconds} s limit]\n`;
    else if (r.aborted) output += '\n[killed: the worker was shutting down]\n';
    return { exitCode: r.exitCode, output, truncated: r.stdoutTruncated, timedOut: r.timedOut, durationMs: r.durationMs };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
