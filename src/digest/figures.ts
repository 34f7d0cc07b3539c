import { z } from 'zod';

/**
 * The figures of one digest. Plain JSON (dates as ISO strings) because the same object is printed by
 * `kernelseek digest --print --json`, stored with the posted digest, and re-read when a post is retried.
 */

const iso = z.iso.datetime({ offset: true });
const speedup = z.number().nullable();

export const DigestRunSchema = z.object({
  id: z.string(),
  task: z.string(),
  arch: z.string().nullable(),
  owner: z.string(),
  /** `active` = not ended by the window's end; otherwise how it ended inside the window. */
  state: z.enum(['active', 'finished', 'stopped', 'failed']),
  /** The run's status now (it may have moved on since a past window ended). */
  status: z.string(),
  endReason: z.string().nullable(),
  startedInWindow: z.boolean(),
  bestSpeedup: speedup,
  bestSpeedupVsPeer: speedup,
  /** Evaluations of this run that finished in the window. */
  evaluations: z.number().int(),
  costUsd: z.number(),
  slackChannel: z.string().nullable(),
  slackThreadTs: z.string().nullable(),
});
export type DigestRun = z.infer<typeof DigestRunSchema>;

export const DigestBestSchema = z.object({
  speedupVsBaseline: z.number(),
  /** Against the fastest peer the harness timed in the same session; null for tasks without peers. */
  speedupVsPeer: speedup,
  peer: z.string().nullable(),
  runId: z.string(),
  evaluationId: z.number().int(),
  seq: z.number().int().nullable(),
  at: iso,
});
export type DigestBest = z.infer<typeof DigestBestSchema>;

export const DigestTaskSchema = z.object({
  task: z.string(),
  arch: z.string().nullable(),
  runs: z.number().int(),
  evaluations: z.number().int(),
  /** Correct on every scenario of the full set: the only candidates that count. */
  correct: z.number().int(),
  /** The best counted candidate of the window (by speedup over the baseline), if any. */
  best: DigestBestSchema.nullable(),
  /** The best counted candidate before the window, for "up from"; null when there was none. */
  previousBest: speedup,
  /**
   * Each new best of the window in time order: a counted candidate that beat the best before it
   * (the previous best, or the baseline at 1.0). The digest's chart is drawn from these.
   */
  progress: z.array(z.object({ at: iso, speedup: z.number() })),
  harnessSeconds: z.number(),
  costUsd: z.number(),
});
export type DigestTask = z.infer<typeof DigestTaskSchema>;

export const DigestQuestionSchema = z.object({
  questionId: z.number().int(),
  runId: z.string(),
  task: z.string(),
  source: z.enum(['human', 'bank']),
  author: z.string(),
  bankId: z.string().nullable(),
  text: z.string(),
  bestBefore: z.number(),
  bestAfter: z.number(),
  /** bestAfter / bestBefore (1.0 = no improvement). */
  gain: z.number(),
  /** False while the question's attribution window is still open: the gain may still grow. */
  final: z.boolean(),
  askedAt: iso,
  /** When the evaluation that reached `bestAfter` finished (inside the window). */
  realizedAt: iso,
});
export type DigestQuestion = z.infer<typeof DigestQuestionSchema>;

export const DigestFiguresSchema = z.object({
  window: z.object({ from: iso, to: iso }),
  runs: z.object({
    started: z.number().int(),
    active: z.number().int(),
    finished: z.number().int(),
    stopped: z.number().int(),
    failed: z.number().int(),
    list: z.array(DigestRunSchema),
  }),
  tasks: z.array(DigestTaskSchema),
  evaluations: z.object({
    total: z.number().int(),
    /** Counted candidates: status ok, correct on the full scenario set. */
    correct: z.number().int(),
    /** Evaluations on the quick subset (never counted as bests). */
    quick: z.number().int(),
    byStatus: z.record(z.string(), z.number().int()),
    /** Evaluations not attached to a run (`kernelseek eval --remote`). */
    adHoc: z.number().int(),
    harnessSeconds: z.number(),
    /** Harness time on GPU hosts (arch sm_*), the rest ran on CPU tasks. */
    gpuSeconds: z.number(),
  }),
  model: z.object({
    costUsd: z.number(),
    steps: z.number().int(),
    inputTokens: z.number().int(),
    outputTokens: z.number().int(),
  }),
  questions: z.object({
    human: z.number().int(),
    bank: z.number().int(),
    /** Distinct people who asked. */
    people: z.number().int(),
    top: z.array(DigestQuestionSchema),
  }),
});
export type DigestFigures = z.infer<typeof DigestFiguresSchema>;

/** True when nothing happened in the window (the digest then says so in one line). */
export function isQuietWindow(f: DigestFigures): boolean {
  return f.runs.list.length === 0 && f.evaluations.total === 0 && f.model.steps === 0 && f.questions.human + f.questions.bank === 0;
}
