import { and, asc, eq, isNull, ne } from 'drizzle-orm';
import type { Database } from '../client.js';
import { decisionCards } from '../schema.js';

export type DecisionCard = typeof decisionCards.$inferSelect;

/**
 * Decision points as cards: the engine opens one when a run reaches a decision point and closes it
 * when a question answers it or the run ends; the Slack reporter records the card's message. A card
 * id names one decision point of one run (`<run>.d<n>`), so an answer given to it can never reach
 * another.
 */
export function createDecisionCardRepository(db: Database) {
  return {
    /** Opens a card; any card of the run still open is closed first (`superseded`): a run waits at one decision point at a time. */
    async open(card: { id: string; runId: string; seq: number; trigger: string; openedAt: Date }): Promise<DecisionCard> {
      await db
        .update(decisionCards)
        .set({ closedAt: card.openedAt, closedBy: 'superseded' })
        .where(and(eq(decisionCards.runId, card.runId), isNull(decisionCards.closedAt), ne(decisionCards.id, card.id)));
      const [row] = await db.insert(decisionCards).values(card).onConflictDoNothing().returning();
      return row ?? (await this.get(card.id))!;
    },

    async get(id: string): Promise<DecisionCard | undefined> {
      const [row] = await db.select().from(decisionCards).where(eq(decisionCards.id, id));
      return row;
    },

    /** The run's cards, oldest first. */
    async forRun(runId: string): Promise<DecisionCard[]> {
      return db.select().from(decisionCards).where(eq(decisionCards.runId, runId)).orderBy(asc(decisionCards.seq));
    },

    /** Closes every open card of a run (the run ended). */
    async closeOpen(runId: string, closedBy: string, at: Date = new Date()): Promise<void> {
      await db
        .update(decisionCards)
        .set({ closedAt: at, closedBy })
        .where(and(eq(decisionCards.runId, runId), isNull(decisionCards.closedAt)));
    },

    /** Where the card was posted (the Slack reporter, once chat.postMessage answered). */
    async setMessage(id: string, channel: string, ts: string): Promise<void> {
      await db.update(decisionCards).set({ slackChannel: channel, slackTs: ts }).where(eq(decisionCards.id, id));
    },
  };
}

export type DecisionCardRepository = ReturnType<typeof createDecisionCardRepository>;
