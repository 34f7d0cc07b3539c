import { z } from 'zod';
import { DECISION_TRIGGERS } from './decisions/triggers.js';

/**
 * Engine state kept in `runs.state` (jsonb): what a turn needs beyond the conversation to carry on
 * after its worker dies. Written by shallow merges of top-level keys (`patchState`), so a control
 * action (ask the bank now) and a turn never overwrite each other's keys.
 */
export const DecisionStateSchema = z.object({
  /** The decision card's id (`<run>.d<n>`); absent in states saved before cards had ids. */
  id: z.string().optional(),
  trigger: z.enum(DECISION_TRIGGERS),
  reason: z.string(),
  evidence: z.record(z.string(), z.unknown()),
  /** When the run started waiting (ISO). */
  at: z.string(),
  /** When the bank asks if no person has (ISO); null: at once. */
  deadline: z.string().nullable(),
});
export type DecisionState = z.infer<typeof DecisionStateSchema>;

export const CountedStateSchema = z.object({
  evaluationId: z.number().int().nullable(),
  seq: z.number().int(),
  speedupVsBaseline: z.number(),
  speedupVsBestPeer: z.number().nullable(),
  peer: z.string().nullable(),
  fullSetCheck: z.boolean(),
});

export const RunStateSchema = z.object({
  version: z.literal(1).default(1),
  scenarios: z.enum(['quick', 'all']).default('all'),
  /** Number of the next turn job; a job for any other number is a stale duplicate. */
  turn: z.number().int().nonnegative().default(0),
  decision: DecisionStateSchema.nullable().default(null),
  /** Decision points reached so far: the next card is `<run>.d<decisionCount + 1>`. */
  decisionCount: z.number().int().nonnegative().default(0),
  /** Evaluation seq at the last decision point: plateau and failing streaks count after it. */
  lastDecisionEvalSeq: z.number().int().nonnegative().default(0),
  /** Assistant message seq whose claim of a limit was already acted on. */
  lastClaimMessageSeq: z.number().int().default(-1),
  /** The target for which target_reached was announced (raising the target re-arms it). */
  targetAnnounced: z.number().nullable().default(null),
  /** Tool results in messages with seq < throughSeq are sent compacted; `note` restates what matters. */
  compaction: z.object({ throughSeq: z.number().int().nonnegative(), note: z.string() }).nullable().default(null),
  /** Sequence numbers reserved for in-flight tool calls, so a re-executed call reuses its job id. */
  toolSeqs: z.record(z.string(), z.object({ evalSeq: z.number().int().optional(), gpuSeq: z.number().int().optional() })).default({}),
  nextGpuSeq: z.number().int().positive().default(1),
  /** The assistant message (seq) that ended in pause_turn: the next step continues it. */
  pauseTurnSeq: z.number().int().default(-1),
  /** The last step was cut off at max_tokens: the next one gets a larger allowance. */
  maxTokensBoost: z.boolean().default(false),
  /** Milliseconds spent waiting for questions (not counted against the wall-time budget). */
  waitedMs: z.number().nonnegative().default(0),
  /** A person pressed *Ask from the bank* (ISO): the pending decision point takes a bank question now. */
  bankRequestedAt: z.string().nullable().default(null),
  /** Decision points (any kind) in a row with no new evaluation between them (convergence). */
  stopStreak: z.number().int().nonnegative().default(0),
  /** evalsUsed at the last decision point of the streak: an evaluation since then breaks it. */
  stopStreakEvalSeq: z.number().int().nonnegative().default(0),
  /**
   * stepsUsed when the run last evaluated (or started, or was re-opened): the request cap counts the
   * model requests since. Absent in older states: set at the next step, so no old run ends at once.
   */
  stepsAtLastEval: z.number().int().nonnegative().optional(),
  /** Set while an evaluation or gpu_bash job waits because no gpu-worker can take it (what to show). */
  waitingForWorker: z.string().nullable().default(null),
  /**
   * The run's counted best (src/harness/counted-best.ts) as of its last evaluation or full-set check,
   * kept here so a status card or `kernelseek runs` shows it without reading every evaluation. Absent
   * in states saved before issue 42 (the run view then reads the best columns of a full-set run).
   */
  counted: CountedStateSchema.nullable().optional(),
});
export type RunState = z.infer<typeof RunStateSchema>;

export function parseRunState(raw: unknown): RunState {
  const parsed = RunStateSchema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  // A state written by a newer engine or corrupted by hand: fail loudly rather than guess.
  throw new Error(`run state is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
}
