import { and, asc, desc, eq, gte, isNotNull, lt } from 'drizzle-orm';
import type { Database } from '../client.js';
import { evaluations } from '../schema.js';

export type Evaluation = typeof evaluations.$inferSelect;
export type NewEvaluation = typeof evaluations.$inferInsert;
export type EvaluationOutcome = Pick<
  Evaluation,
  'status' | 'correct' | 'speedupVsBaseline' | 'speedupVsBestPeer' | 'result' | 'gpu' | 'arch' | 'worker' | 'harnessSeconds' | 'startedAt'
>;

export function createEvaluationRepository(db: Database) {
  return {
    /** Creates the pending row for a job; a second call with the same job id returns the first row. */
    async createPending(input: Omit<NewEvaluation, 'status'>): Promise<Evaluation> {
      const [row] = await db
        .insert(evaluations)
        .values({ ...input, status: 'pending' })
        .onConflictDoNothing()
        .returning();
      if (row) return row;
      const existing = input.jobId
        ? await db.select().from(evaluations).where(eq(evaluations.jobId, input.jobId))
        : await db.select().from(evaluations).where(and(eq(evaluations.runId, input.runId!), eq(evaluations.seq, input.seq!)));
      return existing[0]!;
    },

    async complete(id: number, outcome: EvaluationOutcome): Promise<Evaluation> {
      const [row] = await db
        .update(evaluations)
        .set({ ...outcome, finishedAt: new Date() })
        .where(eq(evaluations.id, id))
        .returning();
      return row!;
    },

    async get(id: number): Promise<Evaluation | undefined> {
      const [row] = await db.select().from(evaluations).where(eq(evaluations.id, id));
      return row;
    },

    async forRun(runId: string): Promise<Evaluation[]> {
      return db.select().from(evaluations).where(eq(evaluations.runId, runId)).orderBy(asc(evaluations.seq));
    },

    async finishedBetween(from: Date, to: Date): Promise<Evaluation[]> {
      return db
        .select()
        .from(evaluations)
        .where(and(isNotNull(evaluations.finishedAt), gte(evaluations.finishedAt, from), lt(evaluations.finishedAt, to)))
        .orderBy(desc(evaluations.finishedAt));
    },
  };
}

export type EvaluationRepository = ReturnType<typeof createEvaluationRepository>;
