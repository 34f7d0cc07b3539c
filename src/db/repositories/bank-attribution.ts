import { and, asc, eq, inArray, isNotNull, isNull, lt, notInArray, or, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { TERMINAL_STATUSES } from '../run-status.js';
import { bankEntries, evaluations, questions, runs } from '../schema.js';

/** The fields of a question that attribution reads. */
export type AskedQuestion = Pick<typeof questions.$inferSelect, 'id' | 'runId' | 'evalSeqAtAsk' | 'bestBefore' | 'bestAfter' | 'gain' | 'evalsAfter'>;
/**
 * The fields of an evaluation that attribution reads (no source; of the result blob only the summary's
 * interval and verdict vs the baseline, which the gain rule reads: src/harness/significance.ts; the
 * scenario set, since only full-set results count: src/harness/counted-best.ts).
 */
export type EvaluationScore = Pick<typeof evaluations.$inferSelect, 'runId' | 'seq' | 'status' | 'correct' | 'scenarios' | 'speedupVsBaseline'> & { result?: unknown };
/** The figures attribution stores on one question. */
export type AttributionUpdate = { id: number } & Pick<typeof questions.$inferSelect, 'bestBefore' | 'bestAfter' | 'gain' | 'evalsAfter'>;
/** One asked question, as per-bank-id statistics need it. */
export type AskRow = Pick<typeof questions.$inferSelect, 'bankId' | 'source' | 'gain' | 'createdAt' | 'deliveredAt'>;

/**
 * Of an evaluation's result, only its summary (small: no scenarios, no compile log): the interval and
 * verdict vs the baseline and vs the incumbent timed beside it, which the gain rule reads
 * (src/harness/significance.ts), and the strongest peer's name. Every counted best read through SQL
 * (attribution, the digest) is decided on the same figures as the run's own.
 */
export const gainResult = sql<unknown>`jsonb_build_object('summary', ${evaluations.result}->'summary')`;

/** Queries behind gain attribution, bank statistics and promotion (src/questions/). */
export function createBankAttributionRepository(db: Database) {
  return {
    /**
     * Questions that were delivered to the agent and whose attribution may still change for a window
     * of `k` evaluations: no gain recorded yet, or fewer than k evaluations seen after them in a run
     * that is still live (an ended run gets no more evaluations).
     */
    async openQuestions(k: number): Promise<AskedQuestion[]> {
      return db
        .select({
          id: questions.id,
          runId: questions.runId,
          evalSeqAtAsk: questions.evalSeqAtAsk,
          bestBefore: questions.bestBefore,
          bestAfter: questions.bestAfter,
          gain: questions.gain,
          evalsAfter: questions.evalsAfter,
        })
        .from(questions)
        .innerJoin(runs, eq(runs.id, questions.runId))
        .where(
          and(
            isNotNull(questions.deliveredAt),
            or(isNull(questions.gain), and(lt(questions.evalsAfter, k), notInArray(runs.status, [...TERMINAL_STATUSES]))),
          ),
        )
        .orderBy(asc(questions.id));
    },

    async evaluationScores(runIds: string[]): Promise<EvaluationScore[]> {
      if (runIds.length === 0) return [];
      return db
        .select({
          runId: evaluations.runId,
          seq: evaluations.seq,
          status: evaluations.status,
          correct: evaluations.correct,
          scenarios: evaluations.scenarios,
          speedupVsBaseline: evaluations.speedupVsBaseline,
          result: gainResult,
        })
        .from(evaluations)
        .where(and(inArray(evaluations.runId, runIds), isNotNull(evaluations.seq)))
        .orderBy(asc(evaluations.runId), asc(evaluations.seq));
    },

    async runStatuses(runIds: string[]): Promise<Map<string, (typeof runs.$inferSelect)['status']>> {
      if (runIds.length === 0) return new Map();
      const rows = await db.select({ id: runs.id, status: runs.status }).from(runs).where(inArray(runs.id, runIds));
      return new Map(rows.map((r) => [r.id, r.status]));
    },

    /**
     * Stores many attributions with one UPDATE per chunk: row-by-row updates cost a round trip each,
     * which on the embedded database is most of the time attribution takes.
     */
    async recordAttributions(rows: AttributionUpdate[]): Promise<void> {
      for (let i = 0; i < rows.length; i += 500) {
        const values = sql.join(
          rows
            .slice(i, i + 500)
            .map((r) => sql`(${r.id}::bigint, ${r.bestBefore}::double precision, ${r.bestAfter}::double precision, ${r.gain}::double precision, ${r.evalsAfter}::integer)`),
          sql`, `,
        );
        await db.execute(sql`
          update ${questions} set best_before = v.best_before, best_after = v.best_after, gain = v.gain, evals_after = v.evals_after
          from (values ${values}) as v(id, best_before, best_after, gain, evals_after)
          where ${questions.id} = v.id`);
      }
    },

    /** Every question delivered to an agent, people's and the bank's, oldest first. */
    async bankAsks(): Promise<AskRow[]> {
      return db
        .select({ bankId: questions.bankId, source: questions.source, gain: questions.gain, createdAt: questions.createdAt, deliveredAt: questions.deliveredAt })
        .from(questions)
        .where(isNotNull(questions.deliveredAt))
        .orderBy(asc(questions.id));
    },

    /** A promoted entry made from this question, if there is one (retired ones included). */
    async entryFromQuestion(questionId: number) {
      const [row] = await db.select().from(bankEntries).where(eq(bankEntries.originQuestionId, questionId));
      return row;
    },

    /** Inserts a bank entry unless its id is taken; returns whether it was inserted. */
    async insertEntry(entry: typeof bankEntries.$inferInsert): Promise<boolean> {
      const rows = await db.insert(bankEntries).values(entry).onConflictDoNothing().returning({ id: bankEntries.id });
      return rows.length > 0;
    },
  };
}

export type BankAttributionRepository = ReturnType<typeof createBankAttributionRepository>;
