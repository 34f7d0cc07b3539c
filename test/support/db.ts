import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { Store } from '../../src/db/index.js';
import { createTestDatabase, type Backend, type TestDatabase } from './databases.js';

export * from './databases.js';

/**
 * One migrated database of `backend` for the tests of a describe block (created before the first,
 * emptied before each, dropped after the last). Read `.store` / `.db` inside tests only.
 */
export function useTestDatabase(backend: Backend) {
  let t: TestDatabase | undefined;
  beforeAll(async () => {
    t = await createTestDatabase(backend);
  });
  beforeEach(async () => {
    await t!.reset();
  });
  afterAll(async () => {
    await t?.dispose();
  });
  return {
    get db(): TestDatabase {
      return t!;
    },
    get store(): Store {
      return t!.store;
    },
  };
}
