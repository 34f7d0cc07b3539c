import { z } from 'zod';
import { bool, duration, optionalString, positiveInt } from '../fields.js';

/**
 * The agent engine's tunables. Budgets and targets are per run (command options); these are the
 * deployment-wide limits every run shares.
 */
export const AgentEnvSchema = z.object({
  KERNELSEEK_STEPS_PER_TURN: positiveInt(8),
  KERNELSEEK_CONTEXT_BUDGET: positiveInt(150_000, '150000'),
  KERNELSEEK_MAX_OUTPUT_TOKENS: positiveInt(16_000, '16000'),
  KERNELSEEK_MODEL_RETRIES: positiveInt(6),
  // Bounds on one model step (issue 39): step-limits.ts, the model client's idle watch.
  KERNELSEEK_MAX_TOOL_CALLS: positiveInt(20),
  KERNELSEEK_MAX_COMMAND_KB: positiveInt(64),
  KERNELSEEK_MAX_TOOL_RESULT: positiveInt(60_000, '60000'),
  KERNELSEEK_MODEL_IDLE_TIMEOUT: duration('120s').refine((s) => s >= 1, { message: 'must be at least 1s, e.g. 120s' }),
  KERNELSEEK_BASH_TIMEOUT: duration('120s'),
  KERNELSEEK_BASH_OUTPUT_CAP: positiveInt(30_000, '30000'),
  KERNELSEEK_SANDBOX: z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    z.enum(['on', 'off'], { message: "must be on (the agent's commands run in bubblewrap, refused where it is unavailable) or off (no sandbox: only for a machine you do not care about)" }).default('on'),
  ),
  KERNELSEEK_SANDBOX_MEMORY_MB: positiveInt(8192),
  KERNELSEEK_SANDBOX_PROCESSES: positiveInt(256),
  KERNELSEEK_SANDBOX_FILE_MB: positiveInt(1024),
  KERNELSEEK_SANDBOX_TMP_MB: positiveInt(1024),
  KERNELSEEK_KEEP_HOMES: bool(false),
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
  /** Bounds on one model step; each refusal is a tool result the model reads, not a run status. */
  stepLimits: {
    /** Tool calls of one model message that are executed; the rest are answered as refused. */
    maxToolCalls: number;
    /** Bytes of one `bash` or `gpu_bash` command; a longer one is refused. */
    maxCommandBytes: number;
    /** Characters of one tool result the model gets; the middle of a longer one is cut. */
    maxToolResultChars: number;
    /** A streaming response with no data for this long is aborted (and retried). */
    idleTimeoutSeconds: number;
  };
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
    /** Size of the sandbox's /tmp and of its /dev/shm (each a tmpfs: RAM), MB. */
    tmpMb: number;
    /** Keep a run's HOME (pip installs, caches, scratch) after it ends; by default it is removed. */
    keepHomes: boolean;
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
    stepLimits: {
      maxToolCalls: env.KERNELSEEK_MAX_TOOL_CALLS,
      maxCommandBytes: env.KERNELSEEK_MAX_COMMAND_KB * 1024,
      maxToolResultChars: env.KERNELSEEK_MAX_TOOL_RESULT,
      idleTimeoutSeconds: env.KERNELSEEK_MODEL_IDLE_TIMEOUT,
    },
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
      tmpMb: env.KERNELSEEK_SANDBOX_TMP_MB,
      keepHomes: env.KERNELSEEK_KEEP_HOMES,
      workspaceMaxMb: env.KERNELSEEK_WORKSPACE_MAX_MB,
    },
    decisions: { plateauEvals: env.KERNELSEEK_PLATEAU_EVALS, failingEvals: env.KERNELSEEK_FAILING_EVALS },
    runs: { convergeStops: env.KERNELSEEK_CONVERGE_STOPS, stepsPerEval: env.KERNELSEEK_STEPS_PER_EVAL, leaseSeconds: env.KERNELSEEK_RUN_LEASE, reconcileSeconds: env.KERNELSEEK_RECONCILE_EVERY },
    extraSecrets: (env.KERNELSEEK_SECRETS ?? '').split(',').map((s) => s.trim()).filter((s) => s.length >= 4),
  };
}
