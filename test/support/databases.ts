// Databases and temporary folders for tests and benchmarks. No vitest import: bench/ scripts use
// these under plain tsx; the describe-block hooks (useTestDatabase) are in db.ts.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createStore, openDatabase, type DatabaseHandle, type Store } from '../../src/db/index.js';

/** The Postgres server tests use (a database is created per test and dropped afterwards). */
export const TEST_POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  handle: DatabaseHandle;
  store: Store;
  /** For Postgres: a connection string to this test's own database. */
  url?: string;
  /** For PGlite on disk: its data directory. */
  dataDir?: string;
  /** Empties every table (fast isolation between tests sharing one database). */
  reset(): Promise<void>;
  dispose(): Promise<void>;
}

const TABLES = ['runs', 'run_messages', 'agent_steps', 'tool_calls', 'evaluations', 'questions', 'bank_entries', 'slack_events', 'digests'];

function resetter(handle: DatabaseHandle): () => Promise<void> {
  return async () => {
    await handle.db.execute(`truncate ${TABLES.join(', ')} restart identity cascade`);
  };
}

/** Creates an empty Postgres database with a unique name; returns its URL and a dropper. */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `ks_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

export async function createTempDir(prefix = 'ks-test-'): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  // Retries: a process a test just stopped (a harness child, git) can still be writing in it.
  return { dir, remove: () => rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }) };
}

export type Backend = 'postgres' | 'pglite';
export const BACKENDS: Backend[] = ['postgres', 'pglite'];

/**
 * A migrated, empty database of the given kind that belongs to one test file: Postgres gets a
 * database of its own; PGlite runs in memory (its on-disk mode is covered by the migrate tests).
 */
export async function createTestDatabase(backend: Backend): Promise<TestDatabase> {
  if (backend === 'postgres') {
    const pgdb = await createPostgresDatabase();
    const handle = await openDatabase({ kind: 'postgres', url: pgdb.url });
    await handle.migrate();
    return {
      handle,
      store: createStore(handle.db),
      url: pgdb.url,
      reset: resetter(handle),
      async dispose() {
        await handle.close();
        await pgdb.drop();
      },
    };
  }
  const handle = await openDatabase({ kind: 'memory' });
  await handle.migrate();
  return {
    handle,
    store: createStore(handle.db),
    reset: resetter(handle),
    dispose: () => handle.close(),
  };
}

