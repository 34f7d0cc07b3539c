import { and, asc, count, eq, gt, gte, inArray, isNotNull, isNull, lt, max, or, sql, sum } from 'drizzle-orm';
import type { Database } from '../client.js';
import { agentSteps, evaluations, questions, runs } from '../schema.js';
import { gainResult } from './bank-attribution.js';

/**
 * An evaluation as the digest reads it: no source; of the result blob only its summary (the strongest
 * peer's name, and the interval and verdicts the counted best is decided on).
 */
export interface DigestEvaluationRow {
  id: number;
  runId: string | null;
  seq: number | null;
  task: string;
  arch: string | null;
  status: (typeof evaluations.$inferSelect)['status'];
  correct: boolean | null;
  scenarios: string;
  speedupVsBaseline: number | null;
  speedupVsBestPeer: number | null;
  bestPeer: string | null;
  harnessSeconds: number | null;
  finishedAt: Date;
  /** `{ summary }` of the result (src/harness/counted-best.ts reads its interval and verdicts). */
  result?: unknown;
}

export type DigestRunRow = Pick<
  typeof runs.$inferSelect,
  | 'id'
  | 'task'
  | 'arch'
  | 'owner'
  | 'status'
  | 'endReason'
  | 'bestSpeedup'
  | 'bestSpeedupVsPeer'
  | 'slackChannel'
  | 'slackThreadTs'
  | 'createdAt'
  | 'finishedAt'
> & {
  /** A quick run's end-of-run full-set check of its best (`runs.state.confirmation`), if any. */
  confirmation?: unknown;
};

export interface DigestStepUsageRow {
  runId: string;
  task: string;
  steps: number;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
}

export type DigestQuestionRow = Pick<
  typeof questions.$inferSelect,
  'id' | 'runId' | 'source' | 'author' | 'bankId' | 'text' | 'evalSeqAtAsk' | 'bestBefore' | 'bestAfter' | 'gain' | 'evalsAfter' | 'createdAt'
> & { task: string };

export interface PreviousBestRow {
  task: string;
  arch: string | null;
  best: number;
}

/** A candidate that counts for a best: the harness said ok, correct on every scenario of the full set. */
const countsForBest = and(
  eq(evaluations.status, 'ok'),
  eq(evaluations.correct, true),
  eq(evaluations.scenarios, 'all'),
  isNotNull(evaluations.speedupVsBaseline),
  isNotNull(evaluations.runId),
);

const numberOr0 = (v: unknown) => (v == null ? 0 : Number(v));

/** The reads behind the daily digest (src/digest/compute.ts). Every window is `[from, to)`. */
/** What a digest reads of an evaluation: what a best needs, never the source or the full result. */
const EVALUATION_COLUMNS = {
  id: evaluations.id,
  runId: evaluations.runId,
  seq: evaluations.seq,
  task: evaluations.task,
  arch: evaluations.arch,
  status: evaluations.status,
  correct: evaluations.correct,
  scenarios: evaluations.scenarios,
  speedupVsBaseline: evaluations.speedupVsBaseline,
  speedupVsBestPeer: evaluations.speedupVsBestPeer,
  bestPeer: sql<string | null>`${evaluations.result} -> 'summary' ->> 'best_peer'`,
  harnessSeconds: evaluations.harnessSeconds,
  finishedAt: evaluations.finishedAt,
  result: gainResult,
};

export function createDigestFiguresRepository(db: Database) {
  return {
    /** Runs alive at some moment of the window: created before its end, not ended before its start. */
    async runsAlive(from: Date, to: Date): Promise<DigestRunRow[]> {
      return db
        .select({
          id: runs.id,
          task: runs.task,
          arch: runs.arch,
          owner: runs.owner,
          status: runs.status,
          endReason: runs.endReason,
          bestSpeedup: runs.bestSpeedup,
          bestSpeedupVsPeer: runs.bestSpeedupVsPeer,
          slackChannel: runs.slackChannel,
          slackThreadTs: runs.slackThreadTs,
          createdAt: runs.createdAt,
          finishedAt: runs.finishedAt,
          confirmation: sql<unknown>`${runs.state}->'confirmation'`,
        })
        .from(runs)
        .where(and(lt(runs.createdAt, to), or(isNull(runs.finishedAt), gte(runs.finishedAt, from))))
        .orderBy(asc(runs.createdAt), asc(runs.id));
    },

    async evaluationsFinished(from: Date, to: Date): Promise<DigestEvaluationRow[]> {
      const rows = await db
        .select(EVALUATION_COLUMNS)
        .from(evaluations)
        .where(and(isNotNull(evaluations.finishedAt), gte(evaluations.finishedAt, from), lt(evaluations.finishedAt, to)))
        .orderBy(asc(evaluations.finishedAt), asc(evaluations.id));
      return rows.map((r) => ({ ...r, finishedAt: r.finishedAt! }));
    },

    /** Per task and architecture: the best counted candidate that finished before `before`. */
    async previousBests(before: Date, tasks: string[]): Promise<PreviousBestRow[]> {
      if (tasks.length === 0) return [];
      const rows = await db
        .select({ task: evaluations.task, arch: evaluations.arch, best: max(evaluations.speedupVsBaseline) })
        .from(evaluations)
        .where(and(countsForBest, inArray(evaluations.task, tasks), isNotNull(evaluations.finishedAt), lt(evaluations.finishedAt, before)))
        .groupBy(evaluations.task, evaluations.arch);
      return rows.filter((r) => r.best != null).map((r) => ({ task: r.task, arch: r.arch, best: Number(r.best) }));
    },

    /** Model calls made in the window, summed per run. */
    async stepUsage(from: Date, to: Date): Promise<DigestStepUsageRow[]> {
      const rows = await db
        .select({
          runId: agentSteps.runId,
          task: runs.task,
          steps: count(),
          costUsd: sum(agentSteps.costUsd),
          inputTokens: sum(agentSteps.inputTokens),
          outputTokens: sum(agentSteps.outputTokens),
        })
        .from(agentSteps)
        .innerJoin(runs, eq(runs.id, agentSteps.runId))
        .where(and(gte(agentSteps.createdAt, from), lt(agentSteps.createdAt, to)))
        .groupBy(agentSteps.runId, runs.task)
        .orderBy(asc(agentSteps.runId));
      return rows.map((r) => ({
        runId: r.runId,
        task: r.task,
        steps: Number(r.steps),
        costUsd: numberOr0(r.costUsd),
        inputTokens: numberOr0(r.inputTokens),
        outputTokens: numberOr0(r.outputTokens),
      }));
    },

    async questionsAsked(from: Date, to: Date): Promise<Pick<DigestQuestionRow, 'id' | 'source' | 'author'>[]> {
      return db
        .select({ id: questions.id, source: questions.source, author: questions.author })
        .from(questions)
        .where(and(gte(questions.createdAt, from), lt(questions.createdAt, to)))
        .orderBy(asc(questions.id));
    },

    /**
     * Questions of the given runs after which the best speedup rose (as recorded by gain attribution),
     * final or not yet final.
     */
    async questionsWithGain(runIds: string[]): Promise<DigestQuestionRow[]> {
      if (runIds.length === 0) return [];
      return db
        .select({
          id: questions.id,
          runId: questions.runId,
          task: runs.task,
          source: questions.source,
          author: questions.author,
          bankId: questions.bankId,
          text: questions.text,
          evalSeqAtAsk: questions.evalSeqAtAsk,
          bestBefore: questions.bestBefore,
          bestAfter: questions.bestAfter,
          gain: questions.gain,
          evalsAfter: questions.evalsAfter,
          createdAt: questions.createdAt,
        })
        .from(questions)
        .innerJoin(runs, eq(runs.id, questions.runId))
        .where(and(inArray(questions.runId, runIds), isNotNull(questions.bestBefore), gt(questions.bestAfter, questions.bestBefore)))
        .orderBy(asc(questions.id));
    },

    /** Every finished evaluation of the given runs, in order, with what a best needs (no source). */
    async runEvaluations(runIds: string[]): Promise<DigestEvaluationRow[]> {
      if (runIds.length === 0) return [];
      const rows = await db
        .select(EVALUATION_COLUMNS)
        .from(evaluations)
        .where(and(inArray(evaluations.runId, runIds), isNotNull(evaluations.finishedAt)))
        .orderBy(asc(evaluations.runId), asc(evaluations.seq));
      return rows.map((r) => ({ ...r, finishedAt: r.finishedAt! }));
    },
  };
}

export type DigestFiguresRepository = ReturnType<typeof createDigestFiguresRepository>;

