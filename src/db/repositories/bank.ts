import { asc, eq, isNull } from 'drizzle-orm';
import type { Database } from '../client.js';
import { bankEntries } from '../schema.js';

export type BankEntryRow = typeof bankEntries.$inferSelect;

export function createBankRepository(db: Database) {
  return {
    async add(entry: typeof bankEntries.$inferInsert): Promise<BankEntryRow> {
      const [row] = await db.insert(bankEntries).values(entry).returning();
      return row!;
    },
    async get(id: string): Promise<BankEntryRow | undefined> {
      const [row] = await db.select().from(bankEntries).where(eq(bankEntries.id, id));
      return row;
    },
    async active(): Promise<BankEntryRow[]> {
      return db.select().from(bankEntries).where(isNull(bankEntries.retiredAt)).orderBy(asc(bankEntries.createdAt));
    },
  };
}

export type BankRepository = ReturnType<typeof createBankRepository>;
