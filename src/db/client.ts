import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { count, desc, getTableColumns, sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { DbConfig } from '../config/index.js';
import { REPO_ROOT } from '../config/index.js';
import { AppError } from '../core/errors.js';
import type { Run } from './repositories/runs.js';
import { lastDatabaseWrite, SNAPSHOT_EVERY_MS, SNAPSHOT_ROWS, SNAPSHOT_STATE_KEYS, writeRunSnapshot } from './run-snapshot.js';
import * as schema from './schema.js';

/** The one database type repositories see, whichever driver is underneath. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface DatabaseHandle {
  db: Database;
  kind: DbConfig['kind'];
  /** Applies pending migrations; safe to call any number of times, from several processes at once. */
  migrate(): Promise<{ applied: number }>;
  /** Whether a migration of migrations/ is newer than the last one applied (a cheap query). */
  needsMigration(): Promise<boolean>;
  close(): Promise<void>;
}

/** When the newest migration of migrations/ was generated (drizzle's journal `when`). */
async function newestMigration(): Promise<number> {
  const journal = JSON.parse(await readFile(path.join(MIGRATIONS_DIR, 'meta', '_journal.json'), 'utf8')) as { entries: { when: number }[] };
  return Math.max(0, ...journal.entries.map((e) => e.when));
}

/** Drizzle applies every migration generated after the last one applied; none is, when that is the newest. */
async function needsMigration(query: (sql: string) => Promise<{ rows: unknown[] }>): Promise<boolean> {
  let last = 0;
  try {
    const { rows } = await query('select coalesce(max(created_at), 0)::bigint::text as last from drizzle.__drizzle_migrations');
    last = Number((rows[0] as { last: string }).last);
  } catch {
    return true;
  }
  return last < (await newestMigration());
}

/**
 * Migrates only when a migration is pending: a command that only reads (`kernelseek runs`) or a run
 * on an up-to-date database skips loading drizzle's migrator and reading every migration file.
 */
export async function migrateIfNeeded(handle: DatabaseHandle): Promise<{ applied: number }> {
  return (await handle.needsMigration()) ? handle.migrate() : { applied: 0 };
}

export const MIGRATIONS_DIR = path.join(REPO_ROOT, 'migrations');

/** An advisory-lock key shared by every KernelSeek process migrating the same Postgres database. */
const MIGRATION_LOCK_KEY = 7_310_551_022;

async function countApplied(query: (sql: string) => Promise<{ rows: unknown[] }>): Promise<number> {
  try {
    const { rows } = await query('select count(*)::int as n from drizzle.__drizzle_migrations');
    return (rows[0] as { n: number }).n;
  } catch {
    return 0;
  }
}

/** What went wrong connecting, and what to change; PostgreSQL's own error codes where it answered. */
function connectFailure(cause: unknown, url: string): string {
  // node's connect() reports a host with several addresses (localhost: ::1 and 127.0.0.1) as one AggregateError.
  const e = (cause instanceof AggregateError && cause.errors[0] ? cause.errors[0] : cause) as Error & { code?: string; address?: string; port?: number };
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    u = undefined;
  }
  const where = `${u?.hostname || 'localhost'}:${u?.port || 5432}`;
  switch (e.code) {
    case 'ECONNREFUSED':
      return `nothing is listening at ${where} (connection refused): start PostgreSQL there, or correct the host and port in DATABASE_URL (unset it for the embedded database).`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host ${u?.hostname} is not found: correct the host in DATABASE_URL.`;
    case 'ETIMEDOUT':
      return `${where} did not answer in time: check the host, the port and any firewall.`;
    case '3D000':
      return `${e.message}: create it (createdb -h ${u?.hostname || 'localhost'} ${decodeURIComponent(u?.pathname.slice(1) ?? '')}) or name an existing database in DATABASE_URL.`;
    case '28P01':
    case '28000':
      return `${e.message}: correct the user and password in DATABASE_URL.`;
    default:
      return `${e.message || e.code || String(e)}: check DATABASE_URL.`;
  }
}

async function openPostgres(url: string): Promise<DatabaseHandle> {
  // Loaded here, not at the top: a process on the embedded database never needs the pg driver.
  const [{ default: pg }, { drizzle: drizzlePg }] = await Promise.all([import('pg'), import('drizzle-orm/node-postgres')]);
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle client's network error would otherwise crash the process.
  pool.on('error', () => {});
  try {
    await pool.query('select 1');
  } catch (cause) {
    await pool.end().catch(() => {});
    throw new AppError('db_unreachable', `Cannot connect to PostgreSQL at ${redact(url)}: ${(cause as Error).message}`, {
      cause,
      userMessage: `Cannot connect to PostgreSQL at ${redact(url)} (DATABASE_URL): ${connectFailure(cause, url)}`,
    });
  }
  const db = drizzlePg(pool, { schema }) as unknown as Database;
  return {
    db,
    kind: 'postgres',
    async migrate() {
      const lock = await pool.connect();
      try {
        await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
        const before = await countApplied((q) => lock.query(q));
        const { migrate: migratePg } = await import('drizzle-orm/node-postgres/migrator');
        await migratePg(drizzlePg(pool, { schema }), { migrationsFolder: MIGRATIONS_DIR });
        return { applied: (await countApplied((q) => lock.query(q))) - before };
      } finally {
        await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
        lock.release();
      }
    },
    needsMigration: () => needsMigration((q) => pool.query(q)),
    close: () => pool.end(),
  };
}

/** The newest runs as `kernelseek runs` reads them (run-snapshot.ts): the columns, and of the state what the run view needs. */
async function snapshotRows(db: Database): Promise<{ rows: Run[]; complete: boolean }> {
  const { state: _state, ...columns } = getTableColumns(schema.runs);
  const state = sql<Record<string, unknown>>`jsonb_build_object(${sql.raw(SNAPSHOT_STATE_KEYS.map((k) => `'${k}', ${schema.runs.state.name}->'${k}'`).join(', '))})`;
  const rows = await db.select({ ...columns, state }).from(schema.runs).orderBy(desc(schema.runs.createdAt)).limit(SNAPSHOT_ROWS);
  const [total] = await db.select({ n: count() }).from(schema.runs);
  // Keys absent from a run's state come back as JSON null: dropped, so the run reads as it is stored.
  for (const r of rows) for (const k of Object.keys(r.state)) if (r.state[k] === null) delete r.state[k];
  return { rows: rows as Run[], complete: Number(total?.n ?? 0) <= rows.length };
}

async function openPglite(dataDir: string | null): Promise<DatabaseHandle> {
  if (dataDir) await mkdir(path.dirname(dataDir), { recursive: true });
  const [{ PGlite }, { drizzle: drizzlePglite }] = await Promise.all([import('@electric-sql/pglite'), import('drizzle-orm/pglite')]);
  let client: InstanceType<typeof PGlite>;
  try {
    client = dataDir ? new PGlite(dataDir) : new PGlite();
    await client.waitReady;
  } catch (cause) {
    throw new AppError('db_unavailable', `Cannot open the embedded database at ${dataDir}: ${(cause as Error).message}`, {
      cause,
      userMessage: `Cannot open the embedded database at ${dataDir}. Another KernelSeek process may hold it; stop it or set DATABASE_URL.`,
    });
  }
  const db = drizzlePglite(client, { schema }) as unknown as Database;
  // Keeps the run list's snapshot current (run-snapshot.ts) while this process has the database open.
  let snapshotOf = -1;
  let snapshotting: Promise<void> | undefined;
  const refresh = (): Promise<void> => {
    if (!dataDir || snapshotting) return snapshotting ?? Promise.resolve();
    const lastWrite = lastDatabaseWrite(dataDir);
    if (lastWrite === snapshotOf) return Promise.resolve();
    snapshotting = snapshotRows(db)
      .then(({ rows, complete }) => writeRunSnapshot(dataDir, rows, { complete, lastWrite }))
      .then(() => void (snapshotOf = lastWrite))
      .catch(() => undefined)
      .finally(() => (snapshotting = undefined));
    return snapshotting;
  };
  const timer = dataDir ? setInterval(() => void refresh(), SNAPSHOT_EVERY_MS) : undefined;
  timer?.unref();
  return {
    db,
    kind: 'pglite',
    async migrate() {
      const before = await countApplied((q) => client.query(q));
      const { migrate: migratePglite } = await import('drizzle-orm/pglite/migrator');
      await migratePglite(drizzlePglite(client, { schema }), { migrationsFolder: MIGRATIONS_DIR });
      return { applied: (await countApplied((q) => client.query(q))) - before };
    },
    needsMigration: () => needsMigration((q) => client.query(q)),
    async close() {
      if (timer) clearInterval(timer);
      await snapshotting;
      // The rows are read before closing; the file is written after, stamped with the last write
      // closing made (its checkpoint), so the next reader finds it current.
      const rows = dataDir ? await snapshotRows(db).catch(() => undefined) : undefined;
      await client.close();
      if (dataDir && rows) await writeRunSnapshot(dataDir, rows.rows, { complete: rows.complete, lastWrite: lastDatabaseWrite(dataDir) }).catch(() => undefined);
    },
  };
}

/**
 * Opens the configured database: PostgreSQL for a URL, otherwise embedded PGlite in the data dir.
 * `memory` opens a throwaway PGlite (tests).
 */
export async function openDatabase(config: DbConfig | { kind: 'memory' }): Promise<DatabaseHandle> {
  switch (config.kind) {
    case 'postgres':
      return openPostgres(config.url);
    case 'pglite':
      return openPglite(config.dataDir);
    case 'memory':
      return openPglite(null);
  }
}

/** A connection string with its password hidden, for messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}
