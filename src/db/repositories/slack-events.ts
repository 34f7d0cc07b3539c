import { eq, lt } from 'drizzle-orm';
import type { Database } from '../client.js';
import { slackEvents } from '../schema.js';

export function createSlackEventRepository(db: Database) {
  return {
    /** True the first time an event id is seen, false on every redelivery. */
    async markSeen(eventId: string, kind: string): Promise<boolean> {
      const rows = await db.insert(slackEvents).values({ eventId, kind }).onConflictDoNothing().returning();
      return rows.length > 0;
    },
    /** Forgets one id: its handling failed, so Slack's redelivery must be handled, not dropped. */
    async forget(eventId: string): Promise<void> {
      await db.delete(slackEvents).where(eq(slackEvents.eventId, eventId));
    },
    async forgetBefore(cutoff: Date): Promise<void> {
      await db.delete(slackEvents).where(lt(slackEvents.receivedAt, cutoff));
    },
  };
}

export type SlackEventRepository = ReturnType<typeof createSlackEventRepository>;
