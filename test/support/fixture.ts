import { afterAll, afterEach, beforeAll } from 'vitest';
import { createTempDir, createTestDatabase, type Backend, type TestDatabase } from './db.js';

/**
 * A test file's database (PostgreSQL or PGlite) and data directory, and the one service a test
 * starts on them (an agent engine, a Slack stack): after each test the service is closed and the
 * tables are emptied; after the file both are removed.
 */
export function useServiceFixture<T extends { close(): Promise<void> }>(backend: Backend, prefix: string) {
  let db: TestDatabase | undefined;
  let tmp: { dir: string; remove(): Promise<void> } | undefined;
  const fixture = {
    service: undefined as T | undefined,
    get db(): TestDatabase {
      return db!;
    },
    get dataDir(): string {
      return tmp!.dir;
    },
    /** A probe for polling helpers: the run's current row. */
    runOf: (id: string) => () => db!.store.runs.get(id),
  };
  beforeAll(async () => {
    db = await createTestDatabase(backend);
    tmp = await createTempDir(prefix);
  });
  afterEach(async () => {
    await fixture.service?.close();
    fixture.service = undefined;
    await db!.reset();
  });
  afterAll(async () => {
    await db?.dispose();
    await tmp?.remove();
  });
  return fixture;
}
