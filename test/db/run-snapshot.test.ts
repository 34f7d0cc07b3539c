import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { createStore, openDatabase } from '../../src/db/index.js';
import { readRunSnapshot, snapshotPath, SNAPSHOT_EVERY_MS, SNAPSHOT_SLACK_MS } from '../../src/db/run-snapshot.js';
import { runKernelseek } from '../support/cli.js';
import { createTempDir } from '../support/db.js';
import { newRunInput } from '../support/factories.js';

// Issue 42: `kernelseek runs` answers from a snapshot of the embedded database's run list while the
// snapshot is current, and from the database otherwise; both give the same answer.
let tmp: { dir: string; remove(): Promise<void> };
let pgdata: string;
const env = () => ({ KERNELSEEK_DATA_DIR: tmp.dir, KERNELSEEK_TASKS_DIR: path.join(REPO_ROOT, 'kernels'), LOG_LEVEL: 'silent', ANTHROPIC_API_KEY: 'sk-ant-x' });

beforeAll(async () => {
  tmp = await createTempDir('ks-run-snapshot-');
  pgdata = path.join(tmp.dir, 'pgdata');
});
afterAll(async () => {
  await tmp.remove();
});

describe('the run list snapshot of the embedded database', () => {
  it('is written as a process closes the database, and `runs` answers the same from it as from the database', async () => {
    const handle = await openDatabase({ kind: 'pglite', dataDir: pgdata });
    await handle.migrate();
    const store = createStore(handle.db);
    const run = await store.runs.create(newRunInput({ owner: 'alice' }));
    await store.runs.transition(run.id, 'running');
    await store.runs.update(run.id, { leaseOwner: 'terminal:box:1', leaseExpiresAt: new Date(Date.now() - 60_000), evalsUsed: 2 });
    // A large state key (the compaction note holds a kernel) stays out of it; what the view reads stays in.
    await store.agentRuns.patchState(run.id, { compaction: { throughSeq: 3, note: 'x'.repeat(100_000) }, counted: { evaluationId: 7, seq: 2, speedupVsBaseline: 1.5, speedupVsBestPeer: 0.8, peer: 'torch', fullSetCheck: false } });
    await handle.close();

    const snap = await readRunSnapshot(pgdata, 20);
    expect(snap).toHaveLength(1);
    expect(snap![0]).toMatchObject({ id: run.id, owner: 'alice', status: 'running', evalsUsed: 2, leaseOwner: 'terminal:box:1' });
    expect(snap![0]!.leaseExpiresAt).toBeInstanceOf(Date);
    expect((snap![0]!.state as { compaction?: unknown }).compaction).toBeUndefined();
    expect((await readFile(snapshotPath(pgdata), 'utf8')).length).toBeLessThan(10_000);

    const fromSnapshot = await runKernelseek(['runs', '--json'], env());
    await rm(snapshotPath(pgdata));
    const fromDatabase = await runKernelseek(['runs', '--json'], env());
    expect(fromSnapshot.stderr).toBe('');
    expect(JSON.parse(fromSnapshot.stdout)).toEqual(JSON.parse(fromDatabase.stdout));
    // Derived at read time, from the lease in the snapshot: its process is gone.
    expect(JSON.parse(fromSnapshot.stdout)[0]).toMatchObject({ id: run.id, status: 'interrupted', best: 1.5 });
    // Reading the database wrote a fresh one.
    expect(await readRunSnapshot(pgdata, 20)).toHaveLength(1);
  });

  it('is kept current while a process has the database open', async () => {
    const handle = await openDatabase({ kind: 'pglite', dataDir: pgdata });
    try {
      const store = createStore(handle.db);
      const run = await store.runs.create(newRunInput({ owner: 'bob' }));
      await delay(SNAPSHOT_EVERY_MS * 2 + 500);
      expect((await readRunSnapshot(pgdata, 20))?.map((r) => r.id)).toContain(run.id);
      const listed = await runKernelseek(['runs', '--json'], env());
      expect((JSON.parse(listed.stdout) as { id: string }[]).map((r) => r.id)).toContain(run.id);
    } finally {
      await handle.close();
    }
  });

  it('is not used when the database was written after it, or when it holds fewer runs than asked for', async () => {
    const file = snapshotPath(pgdata);
    const body = JSON.parse(await readFile(file, 'utf8')) as { lastWrite: number; complete: boolean; runs: unknown[] };
    expect(await readRunSnapshot(pgdata, 20)).toBeDefined();
    // A write the snapshot does not cover (a process that did not refresh it).
    await writeFile(file, JSON.stringify({ ...body, lastWrite: body.lastWrite - SNAPSHOT_SLACK_MS - 1000 }));
    expect(await readRunSnapshot(pgdata, 20)).toBeUndefined();
    // Cut to fewer rows than asked for.
    await writeFile(file, JSON.stringify({ ...body, complete: false }));
    expect(await readRunSnapshot(pgdata, body.runs.length + 1)).toBeUndefined();
    expect(await readRunSnapshot(pgdata, body.runs.length)).toHaveLength(body.runs.length);
    // Not JSON, or another schema: the database.
    await writeFile(file, '{ not json');
    expect(await readRunSnapshot(pgdata, 20)).toBeUndefined();
    const listed = await runKernelseek(['runs', '--json'], env());
    expect(JSON.parse(listed.stdout)).toHaveLength(body.runs.length);
  });
});
