import { readdirSync, statSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Run } from './repositories/runs.js';

/**
 * The embedded database's run list, kept as a JSON file beside it (issue 42). Opening PGlite costs
 * one to three seconds of CPU (its WebAssembly Postgres starts, reads its catalog, and checkpoints
 * on close), so `kernelseek runs` could not answer within a second by opening it. Every process that
 * has the embedded database open writes this file when a run row changed (polled every
 * SNAPSHOT_EVERY_MS, and once more as it closes the database), and `kernelseek runs` reads it
 * instead of the database while it is current.
 *
 * Current means: written after the database's last write, within SNAPSHOT_SLACK_MS. Postgres writes
 * each commit into pg_wal, so the newest WAL segment's mtime is the time of the last write; a
 * process that keeps the snapshot current rewrites it within SNAPSHOT_EVERY_MS of that. Anything
 * else (a file from an older version, a database written by a process that did not refresh it, a
 * snapshot cut to fewer rows than asked for) sends `runs` to the database, which writes a fresh one.
 * Only this module's own imports are node built-ins: the reader loads no database driver.
 */

export const SNAPSHOT_FILE = 'runs-snapshot.json';
const SCHEMA = 'kernelseek.runs-snapshot/1';
/** How often a process with the embedded database open checks for a write to snapshot. */
export const SNAPSHOT_EVERY_MS = 2000;
/** How far the database's last write may be ahead of the snapshot for it to count as current. */
export const SNAPSHOT_SLACK_MS = 5000;
/** Runs kept in it, newest first: `kernelseek runs --limit` beyond this reads the database. */
export const SNAPSHOT_ROWS = 500;

/** Of a run's state, what the run view reads (the rest can be large: the compaction note holds a kernel). */
export const SNAPSHOT_STATE_KEYS = ['decision', 'waitedMs', 'waitingForWorker', 'counted', 'scenarios'] as const;

interface SnapshotFile {
  schema: typeof SCHEMA;
  /** When it was written, and the database's last write it reflects (ms since the epoch). */
  writtenAt: number;
  lastWrite: number;
  /** True when it holds every run of the database. */
  complete: boolean;
  runs: Record<string, unknown>[];
}

/** The snapshot's path for the embedded database in `pgdataDir` (`<data dir>/pgdata`). */
export function snapshotPath(pgdataDir: string): string {
  return path.join(path.dirname(pgdataDir), SNAPSHOT_FILE);
}

/** When the embedded database was last written (its newest WAL segment), or 0 when it has none. */
export function lastDatabaseWrite(pgdataDir: string): number {
  const wal = path.join(pgdataDir, 'pg_wal');
  try {
    let newest = 0;
    for (const name of readdirSync(wal)) {
      const st = statSync(path.join(wal, name), { throwIfNoEntry: false });
      if (st?.isFile() && st.mtimeMs > newest) newest = st.mtimeMs;
    }
    return newest;
  } catch {
    return 0;
  }
}

const DATE_FIELDS = ['createdAt', 'startedAt', 'updatedAt', 'finishedAt', 'leaseExpiresAt'] as const;

/** Writes the snapshot atomically (a temporary file renamed over it): a reader never sees half of one. */
export async function writeRunSnapshot(pgdataDir: string, rows: Run[], options: { complete: boolean; lastWrite: number }): Promise<void> {
  const file = snapshotPath(pgdataDir);
  const body: SnapshotFile = { schema: SCHEMA, writtenAt: Date.now(), lastWrite: options.lastWrite, complete: options.complete, runs: rows as unknown as Record<string, unknown>[] };
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(body));
  await rename(tmp, file);
}

/**
 * The runs of the snapshot, newest first, when it is current and holds at least `wanted` runs (or
 * all of them); undefined otherwise (read the database then).
 */
export async function readRunSnapshot(pgdataDir: string, wanted: number): Promise<Run[] | undefined> {
  let body: SnapshotFile;
  try {
    body = JSON.parse(await readFile(snapshotPath(pgdataDir), 'utf8')) as SnapshotFile;
  } catch {
    return undefined;
  }
  if (body?.schema !== SCHEMA || !Array.isArray(body.runs) || typeof body.lastWrite !== 'number') return undefined;
  if (lastDatabaseWrite(pgdataDir) > body.lastWrite + SNAPSHOT_SLACK_MS) return undefined;
  if (!body.complete && body.runs.length < wanted) return undefined;
  return body.runs.map((row) => {
    const run = { ...row };
    for (const f of DATE_FIELDS) if (typeof run[f] === 'string') run[f] = new Date(run[f] as string);
    return run as unknown as Run;
  });
}
