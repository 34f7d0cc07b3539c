import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { questions } from '../schema.js';

export type Question = typeof questions.$inferSelect;
export type NewQuestion = typeof questions.$inferInsert;

export function createQuestionRepository(db: Database) {
  return {
    /**
     * Stores a question. With an `externalId` (e.g. a Slack message ts) a repeat delivery of the same
     * reply is ignored and the first row returned, so a retried event never asks twice.
     */
    async add(input: NewQuestion): Promise<{ question: Question; created: boolean }> {
      const [row] = await db.insert(questions).values(input).onConflictDoNothing().returning();
      if (row) return { question: row, created: true };
      const [existing] = await db
        .select()
        .from(questions)
        .where(and(eq(questions.runId, input.runId), eq(questions.externalId, input.externalId!)));
      return { question: existing!, created: false };
    },

    /**
     * Claims every undelivered question of a run, oldest first, marking them delivered in the same
     * statement: a question is handed out exactly once even if two turns race.
     */
    async claimPending(runId: string): Promise<Question[]> {
      const rows = await db
        .update(questions)
        .set({ deliveredAt: new Date() })
        .where(and(eq(questions.runId, runId), isNull(questions.deliveredAt)))
        .returning();
      return rows.sort((a, b) => a.id - b.id);
    },

    async forRun(runId: string): Promise<Question[]> {
      return db.select().from(questions).where(eq(questions.runId, runId)).orderBy(asc(questions.id));
    },

    async get(id: number): Promise<Question | undefined> {
      const [row] = await db.select().from(questions).where(eq(questions.id, id));
      return row;
    },

    async recordAttribution(id: number, fields: Pick<Question, 'bestAfter' | 'gain' | 'evalsAfter'>): Promise<void> {
      await db.update(questions).set(fields).where(eq(questions.id, id));
    },

    async all(): Promise<Question[]> {
      return db.select().from(questions).orderBy(asc(questions.id));
    },

    async countBySource(from: Date, to: Date): Promise<{ human: number; bank: number }> {
      const rows = await db
        .select({ source: questions.source, n: sql<number>`count(*)::int` })
        .from(questions)
        .where(and(sql`${questions.createdAt} >= ${from.toISOString()}`, sql`${questions.createdAt} < ${to.toISOString()}`))
        .groupBy(questions.source);
      return {
        human: rows.find((r) => r.source === 'human')?.n ?? 0,
        bank: rows.find((r) => r.source === 'bank')?.n ?? 0,
      };
    },
  };
}

export type QuestionRepository = ReturnType<typeof createQuestionRepository>;
