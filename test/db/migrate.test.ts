import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresDatabase, createTempDir } from '../support/db.js';
import { runKernelseek } from '../support/cli.js';
import { openDatabase } from '../../src/db/index.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function tableNames(url: string | undefined, dataDir: string | undefined): Promise<string[]> {
  const handle = await openDatabase(url ? { kind: 'postgres', url } : { kind: 'pglite', dataDir: dataDir! });
  try {
    const result = (await handle.db.execute(
      "select table_name from information_schema.tables where table_schema = 'public' order by table_name",
    )) as unknown as { rows: { table_name: string }[] };
    return result.rows.map((r) => r.table_name);
  } finally {
    await handle.close();
  }
}

/** However many migrations the checkout ships (drizzle's journal), a fresh database gets all of them once. */
const MIGRATIONS: number = JSON.parse(readFileSync(path.join(import.meta.dirname, '../../migrations/meta/_journal.json'), 'utf8')).entries.length;
const APPLIED_ALL = new RegExp(`Applied ${MIGRATIONS} migration`);

const EXPECTED_TABLES = ['agent_steps', 'bank_entries', 'decision_cards', 'digests', 'evaluations', 'questions', 'run_messages', 'runs', 'slack_events', 'tool_calls'];

describe('kernelseek migrate', () => {
  it('succeeds twice in a row on an empty PostgreSQL database', async () => {
    const db = await createPostgresDatabase();
    cleanups.push(db.drop);
    const first = await runKernelseek(['migrate'], { DATABASE_URL: db.url });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(APPLIED_ALL);
    const second = await runKernelseek(['migrate'], { DATABASE_URL: db.url });
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/up to date/);
    expect(await tableNames(db.url, undefined)).toEqual(EXPECTED_TABLES);
  });

  it('succeeds twice in a row on an empty data directory (embedded PGlite)', async () => {
    const tmp = await createTempDir();
    cleanups.push(tmp.remove);
    const dataDir = path.join(tmp.dir, 'state');
    const first = await runKernelseek(['migrate'], { KERNELSEEK_DATA_DIR: dataDir });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`embedded database at ${dataDir}/pgdata`);
    expect(first.stdout).toMatch(APPLIED_ALL);
    const second = await runKernelseek(['migrate'], { KERNELSEEK_DATA_DIR: dataDir });
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/up to date/);
    expect(await tableNames(undefined, path.join(dataDir, 'pgdata'))).toEqual(EXPECTED_TABLES);
  });

  it('is safe when several processes migrate the same PostgreSQL database at once', async () => {
    const db = await createPostgresDatabase();
    cleanups.push(db.drop);
    const results = await Promise.all([1, 2, 3].map(() => runKernelseek(['migrate'], { DATABASE_URL: db.url })));
    expect(results.map((r) => r.code)).toEqual([0, 0, 0]);
    expect(results.filter((r) => APPLIED_ALL.test(r.stdout))).toHaveLength(1);
  });

  it('reports an unreachable PostgreSQL server clearly', async () => {
    const result = await runKernelseek(['migrate'], { DATABASE_URL: 'postgres://nobody:secret@127.0.0.1:1/none' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Cannot connect to PostgreSQL at postgres://nobody:***@127.0.0.1:1/none');
    expect(result.stderr).not.toContain('secret');
  });
});
