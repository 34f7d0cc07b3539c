import { z } from 'zod';

/** Defaults a run gets when its starter gives no budget (a person can add budget while it runs). */
export const DEFAULT_BUDGETS = { evals: 50, steps: 200, usd: 25, seconds: 4 * 3600 } as const;
export const DEFAULT_QUESTION_TIMEOUT_SECONDS = 600;

/** Everything needed to start a run, from Slack, the terminal or a test. */
export const StartRunParamsSchema = z.object({
  /** Task name (a folder of the trusted `kernels/`). */
  task: z.string().min(1),
  /** Who started it: a Slack user id, or the terminal user's name. */
  owner: z.string().min(1),
  origin: z.enum(['slack', 'terminal', 'api']),
  /** The Slack thread that belongs to the run (one thread per run). */
  slack: z.object({ channel: z.string().min(1), threadTs: z.string().min(1) }).optional(),
  /** Goal: geomean speedup over the task's goal reference; default the task's own goal. */
  target: z.number().positive().optional(),
  budgets: z
    .object({
      evals: z.number().int().positive(),
      steps: z.number().int().positive(),
      usd: z.number().positive(),
      seconds: z.number().int().positive(),
    })
    .partial()
    .default({}),
  /** Model id; default the deployment's KERNELSEEK_MODEL. */
  model: z.string().regex(/^[a-z0-9][a-z0-9.\-_@:]*$/i, { message: 'must be a model id such as claude-sonnet-4-5' }).optional(),
  /** GPU architecture for cuda tasks (default: the task's first). Ignored for cpu tasks. */
  arch: z.string().regex(/^sm_\d+a?$/, { message: 'must look like sm_90' }).optional(),
  /** How long a decision point waits for a person before the bank asks. */
  questionTimeoutSeconds: z.number().positive().default(DEFAULT_QUESTION_TIMEOUT_SECONDS),
  /** The bank answers every decision point at once. */
  autonomous: z.boolean().default(false),
  /** The scenario set a candidate must pass to count (`quick` for fast iteration on big tasks). */
  scenarios: z.enum(['quick', 'all']).default('all'),
  /**
   * Continue (or fork) this run: the new run starts from its best kernel, with its history
   * summarised in the first message, and records it as its parent. Same task.
   */
  continueFrom: z.string().regex(/^[a-z0-9][a-z0-9-]{2,63}$/, { message: 'must be a run id such as ks-7f3a2c9d' }).optional(),
  /** Fixed run id (tests, replays); normally generated. */
  id: z.string().regex(/^[a-z0-9-]{3,64}$/).optional(),
});
export type StartRunParams = z.input<typeof StartRunParamsSchema>;
export type RunParams = z.output<typeof StartRunParamsSchema>;
