import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { holdRunLease } from '../../src/agent/lease.js';
import { describeRun } from '../../src/agent/run-view.js';
import { silentLogger } from '../../src/core/logger.js';
import { useServiceFixture } from '../support/fixture.js';

// The lease on a run row: one live host at a time; a dead host's lease expires and the run shows interrupted.
const fx = useServiceFixture<{ close(): Promise<void> }>('pglite', 'ks-lease-');

async function newRun() {
  return fx.db.store.runs.create({
    task: 'cpu_softmax', owner: 't', origin: 'terminal', model: 'm', target: 1, questionTimeoutSeconds: 60,
    budgetEvals: 1, budgetSteps: 1, budgetUsd: 1, budgetSeconds: 60,
  });
}

describe('run lease', () => {
  it('refuses a second host while the first renews, and hands over once the first stops renewing', async () => {
    const run = await newRun();
    const a = await holdRunLease(fx.db.store, run.id, { owner: 'terminal:a:1', seconds: 1, logger: silentLogger });
    // Past the first lease's length: only the heartbeat keeps it.
    await delay(1500);
    await expect(holdRunLease(fx.db.store, run.id, { owner: 'terminal:b:2', seconds: 1, logger: silentLogger })).rejects.toThrow(/is hosted by terminal:a:1, which is still alive/);
    const live = (await fx.db.store.runs.get(run.id))!;
    expect(describeRun(live).interrupted).toBe(false);
    expect(describeRun(live).host).toBe('terminal:a:1');

    // A dies without releasing (kill -9): its heartbeat stops and the lease runs out.
    await a.release();
    await fx.db.store.runs.update(run.id, { leaseOwner: 'terminal:a:1', leaseExpiresAt: new Date(Date.now() - 1000) });
    const dead = (await fx.db.store.runs.get(run.id))!;
    expect(describeRun(dead).interrupted).toBe(true);
    const b = await holdRunLease(fx.db.store, run.id, { owner: 'terminal:b:2', seconds: 5, logger: silentLogger });
    expect(describeRun((await fx.db.store.runs.get(run.id))!)).toMatchObject({ host: 'terminal:b:2', interrupted: false });
    await b.release();
    expect((await fx.db.store.runs.get(run.id))!.leaseOwner).toBeNull();
  });

  it('an ended run is never shown interrupted', async () => {
    const run = await newRun();
    await fx.db.store.runs.update(run.id, { leaseOwner: 'terminal:a:1', leaseExpiresAt: new Date(Date.now() - 1000) });
    await fx.db.store.runs.transition(run.id, 'stopped', { endReason: 'stopped_by_user' });
    expect(describeRun((await fx.db.store.runs.get(run.id))!).interrupted).toBe(false);
  });
});
