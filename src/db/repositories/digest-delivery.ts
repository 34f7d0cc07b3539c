import { eq, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { digests } from '../schema.js';

/** Writes behind delivering a claimed digest (src/digest/deliver.ts), beside the digests repository. */
export function createDigestDeliveryRepository(db: Database) {
  return {
    /**
     * Merges `patch` into the digest's stored payload in one statement (jsonb `||`), so progress such
     * as "chart posted" is recorded without rewriting what the claim stored.
     */
    async patchPayload(id: number, patch: Record<string, unknown>): Promise<void> {
      await db
        .update(digests)
        .set({ payload: sql`${digests.payload} || ${JSON.stringify(patch)}::jsonb` })
        .where(eq(digests.id, id));
    },
  };
}

export type DigestDeliveryRepository = ReturnType<typeof createDigestDeliveryRepository>;
