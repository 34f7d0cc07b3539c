import { and, eq } from 'drizzle-orm';
import type { Database } from '../client.js';
import { digests } from '../schema.js';

export type DigestRow = typeof digests.$inferSelect;

export function createDigestRepository(db: Database) {
  return {
    /**
     * Claims the digest of `day` for `channel`. Only the first caller gets the row; every other
     * scheduler replica gets undefined and posts nothing.
     */
    async claim(input: Pick<DigestRow, 'channel' | 'day' | 'windowStart' | 'windowEnd' | 'payload'>): Promise<DigestRow | undefined> {
      const [row] = await db.insert(digests).values(input).onConflictDoNothing().returning();
      return row;
    },
    async markSent(id: number, messageTs: string | null): Promise<void> {
      await db.update(digests).set({ messageTs, sentAt: new Date() }).where(eq(digests.id, id));
    },
    async find(channel: string, day: string): Promise<DigestRow | undefined> {
      const [row] = await db.select().from(digests).where(and(eq(digests.channel, channel), eq(digests.day, day)));
      return row;
    },
  };
}

export type DigestRepository = ReturnType<typeof createDigestRepository>;
