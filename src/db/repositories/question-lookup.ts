import { and, asc, eq } from 'drizzle-orm';
import type { Database } from '../client.js';
import { questions } from '../schema.js';
import type { Question } from './questions.js';

/**
 * Finding a person's question by where it came from. A Slack reply's idempotency key
 * (`<channel>:<ts>`) names one message in the workspace, so it identifies the question without the
 * run (a reaction on the reply carries only the channel and the message ts).
 */
export function createQuestionLookupRepository(db: Database) {
  return {
    async findByExternalId(externalId: string): Promise<Question | undefined> {
      const [row] = await db
        .select()
        .from(questions)
        .where(and(eq(questions.externalId, externalId), eq(questions.source, 'human')))
        .orderBy(asc(questions.id))
        .limit(1);
      return row;
    },
  };
}

export type QuestionLookupRepository = ReturnType<typeof createQuestionLookupRepository>;
