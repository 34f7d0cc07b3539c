import { z } from 'zod';
import { duration, optionalString, positiveInt } from '../fields.js';

/**
 * The agent engine's tunables. Budgets and targets are per run (command options); these are the
 * deployment-wide limits every run shares.
 */
export const AgentEnvSchema = z.object({
  KERNELSEEK_STEPS_PER_TURN: positiveInt(8),
  KERNELSEEK_CONTEXT_BUDGET: positiveInt(150_000, '150000'),
  KERNELSEEK_MAX_OUTPUT_TOKENS: positiveInt(16_000, '16000'),
  KERNELSEEK_MODEL_RETRIES: positiveInt(6),
  KERNELSEEK_BASH_TIMEOUT: duration('120s'),
  KERNELSEEK_BASH_OUTPUT_CAP: positiveInt(30_000, '30000'),
  KERNELSEEK_SANDBOX: z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    z.enum(['on', 'off'], { message: "must be on (the agent's commands run in bubblewrap, refused where it is unavailable) or off (no sandbox: only for a machine you do not care about)" }).default('on'),
  ),
  KERNELSEEK_SANDBOX_MEMORY_MB: positiveInt(8192),
  KERNELSEEK_SANDBOX_PROCESSES: positiveInt(256),
  KERNELSEEK_SANDBOX_FILE_MB: positiveInt(1024),
  KERNELSEEK_WORKSPACE_MAX_MB: positiveInt(50),
  KERNELSEEK_PLATEAU_EVALS: positiveInt(5),
  KERNELSEEK_FAILING_EVALS: positiveInt(3),
  KERNELSEEK_SECRETS: optionalString(),
  // Runs that finish, resume and recover (issue 15).
  KERNELSEEK_CONVERGE_STOPS: positiveInt(3),
  // Model requests since the last evaluation after which a run that only talks ends (issue 42).
  KERNELSEEK_STEPS_PER_EVAL: positiveInt(40),
  KERNELSEEK_RUN_LEASE: duration('30s'),
  KERNELSEEK_RECONCILE_EVERY: duration('30s'),
  // Passed through to the agent's bash (nothing else of this process's environment is).
  PATH: optionalString(),
  LANG: optionalString(),
  TERM: optionalString(),
  CUDA_HOME: optionalString(),
  CUDA_PATH: optionalString(),
  LD_LIBRARY_PATH: optionalString(),
});

export const TOOL_ENV_PASSTHROUGH = ['PATH', 'LANG', 'TERM', 'CUDA_HOME', 'CUDA_PATH', 'LD_LIBRARY_PATH'] as const;

export interface AgentConfig {
  /** Model steps one turn job performs before it re-enqueues the next turn. */
  stepsPerTurn: number;
  /** Estimated request size (tokens) above which old tool results are compacted. */
  contextBudgetTokens: number;
  /** `max_tokens` of each model call (raised once after a max_tokens cut-off). */
  maxOutputTokens: number;
  /** Attempts for 429/529/5xx/connection failures of one model call (spend limits never retry). */
  modelRetries: number;
  bash: {
    timeoutSeconds: number;
    /** Characters of output kept (head and tail) per command. */
    outputCapChars: number;
    /** The only variables of this process's environment the agent's commands see. */
    env: Record<string, string>;
  };
  sandbox: {
    /** `on`: commands run in bubblewrap and are refused where it is unavailable; `off`: unconfined. */
    mode: 'on' | 'off';
    /** RLIMIT_AS of a command without a GPU, MB. */
    memoryMb: number;
    /** RLIMIT_NPROC inside the sandbox's user namespace. */
    processes: number;
    /** RLIMIT_FSIZE, MB. */
    fileSizeMb: number;
    /** A workspace holding more than this (MB, what git would commit) is refused for commit. */
    workspaceMaxMb: number;
  };
  decisions: {
    /** Evaluations in a row without a new best that make a plateau. */
    plateauEvals: number;
    /** Failing or incorrect candidates in a row that make a `failing` decision point. */
    failingEvals: number;
  };
  /** Extra strings `kernelseek trace` redacts, beyond the configured credentials. */
  extraSecrets: string[];
  runs: {
    /** Decision points (of any kind) in a row, with no new evaluation between them, that end a run as converged. */
    convergeStops: number;
    /** Model requests since the last evaluation (or the start) that end a run which talks without measuring. */
    stepsPerEval: number;
    /** How long a run's lease lasts without a heartbeat before its run shows as interrupted. */
    leaseSeconds: number;
    /** How often one agent worker of the cluster re-schedules live runs whose turn job is gone. */
    reconcileSeconds: number;
  };
}

export function buildAgentConfig(env: z.output<typeof AgentEnvSchema>): AgentConfig {
  const passthrough: Record<string, string> = {};
  for (const name of TOOL_ENV_PASSTHROUGH) {
    const value = env[name];
    if (value !== undefined) passthrough[name] = value;
  }
  return {
    stepsPerTurn: env.KERNELSEEK_STEPS_PER_TURN,
    contextBudgetTokens: env.KERNELSEEK_CONTEXT_BUDGET,
    maxOutputTokens: env.KERNELSEEK_MAX_OUTPUT_TOKENS,
    modelRetries: env.KERNELSEEK_MODEL_RETRIES,
    bash: {
      timeoutSeconds: env.KERNELSEEK_BASH_TIMEOUT,
      outputCapChars: env.KERNELSEEK_BASH_OUTPUT_CAP,
      env: passthrough,
    },
    sandbox: {
      mode: env.KERNELSEEK_SANDBOX,
      memoryMb: env.KERNELSEEK_SANDBOX_MEMORY_MB,
      processes: env.KERNELSEEK_SANDBOX_PROCESSES,
      fileSizeMb: env.KERNELSEEK_SANDBOX_FILE_MB,
      workspaceMaxMb: env.KERNELSEEK_WORKSPACE_MAX_MB,
    },
    decisions: { plateauEvals: env.KERNELSEEK_PLATEAU_EVALS, failingEvals: env.KERNELSEEK_FAILING_EVALS },
    runs: { convergeStops: env.KERNELSEEK_CONVERGE_STOPS, stepsPerEval: env.KERNELSEEK_STEPS_PER_EVAL, leaseSeconds: env.KERNELSEEK_RUN_LEASE, reconcileSeconds: env.KERNELSEEK_RECONCILE_EVERY },
    extraSecrets: (env.KERNELSEEK_SECRETS ?? '').split(',').map((s) => s.trim()).filter((s) => s.length >= 4),
  };
}
