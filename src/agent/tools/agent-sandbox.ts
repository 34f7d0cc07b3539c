import path from 'node:path';
import type { Config } from '../../config/index.js';
import type { Workspace } from '../workspace/workspace.js';
import { DEFAULT_HOST_PATH, probeSandbox } from './sandbox-run.js';
import { describeLimits, sandboxEnvironment, sandboxLimits, sandboxOwner, toolchainFolders, type SandboxSpec } from './sandbox.js';

/** Why the agent's commands cannot run here, or null when they can (sandboxed or by choice not). */
export function sandboxUnavailable(config: Config): string | null {
  if (config.agent.sandbox.mode === 'off') return null;
  const probe = probeSandbox(hostPath(config));
  return probe.ok ? null : probe.why;
}

/** The service's PATH, where prlimit and bwrap are looked up. */
export function hostPath(config: Config): string {
  return config.agent.bash.env.PATH ?? DEFAULT_HOST_PATH;
}

/** The message a command tool returns when the sandbox is unavailable. */
export function refusalMessage(why: string): string {
  return `Commands are disabled on this host: the sandbox they must run in is unavailable (${why}). The operator can install bubblewrap (scripts/setup.sh) or set KERNELSEEK_SANDBOX=off. You can still edit files and call evaluate.`;
}

/**
 * The sandbox of a run's bash commands: its workspace read-write at /workspace, its git history
 * read-only at /workspace/.git, its own HOME, the toolchains read-only, no GPU (bash runs on the
 * engine's host; gpu_bash is for the device).
 */
export function bashSandbox(config: Config, ws: Workspace): SandboxSpec {
  return {
    workspace: ws.dir,
    home: ws.homeDir,
    gitDir: ws.gitDir,
    env: sandboxEnvironment(config.agent.bash.env, config.harness),
    gpu: false,
    readOnly: toolchainFolders(config.harness, [config.agent.bash.env.CUDA_HOME, config.agent.bash.env.CUDA_PATH]),
    limits: sandboxLimits(config.agent, false),
    owner: sandboxOwner(ws.runId),
  };
}

/** What the system prompt says about the limits of bash commands. */
export function bashLimitsSentence(config: Config): string {
  return describeLimits(sandboxLimits(config.agent, false));
}

/** The environment of an unsandboxed command (KERNELSEEK_SANDBOX=off): host paths for HOME/TMPDIR. */
export function plainEnvironment(config: Config, ws: Workspace): Record<string, string> {
  return { ...sandboxEnvironment(config.agent.bash.env, config.harness), HOME: ws.homeDir, TMPDIR: path.join(ws.homeDir, 'tmp') };
}
