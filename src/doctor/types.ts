import type { Config, ConfigProblem, Env } from '../config/index.js';

/** What a check found: `ok`, `warn` (works, but not as a team deployment should), `fail` (will not work). */
export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of the report: what was checked, what was found, and for warn and fail what to do. */
export interface CheckLine {
  status: CheckStatus;
  /** What was checked: a variable (`SLACK_BOT_TOKEN`) or a part of the host (`Redis`, `GPU`). */
  name: string;
  detail: string;
  fix?: string;
}

/**
 * The parts of KernelSeek a process runs, and so what it needs: `kernelseek serve --role all` runs
 * slack, agent and scheduler; a GPU host runs worker.
 */
export type Part = 'slack' | 'agent' | 'scheduler' | 'worker';

/** The roles `kernelseek doctor --role` takes. */
export const DOCTOR_ROLES = ['serve', 'gpu-worker', 'agent'] as const;
export type DoctorRole = (typeof DOCTOR_ROLES)[number];

export const PARTS_OF_ROLE: Record<DoctorRole, Part[]> = {
  serve: ['slack', 'agent', 'scheduler'],
  agent: ['agent'],
  'gpu-worker': ['worker'],
};

/** What the checks get: the environment, the configuration it gives (or its problems), and how deep to look. */
export interface CheckContext {
  env: Env;
  parts: Set<Part>;
  /** Undefined when the environment gives no usable configuration even with its faulty variables unset. */
  config: Config | undefined;
  problems: ConfigProblem[];
  /** A worker's requested architecture (`--arch`): `cpu`, `sm_90`, ...; undefined: the GPUs' own. */
  arch?: string;
  /** A worker's `--gpus`. */
  gpus?: number[];
  /** Ask the model API too (one free request: the model's description). */
  checkModel: boolean;
  /**
   * At a service's start: what the service is about to do anyway is not done twice (the embedded
   * database is not opened here, only its folder checked).
   */
  atStart: boolean;
  /** The manifest whose scopes the Slack token must have. */
  manifestPath: string;
  nvidiaSmi?: string;
}

export type Check = (ctx: CheckContext) => Promise<CheckLine[]>;
