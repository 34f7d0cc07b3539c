import { setTimeout as delay } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Queue } from 'bullmq';
import { execa } from 'execa';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { createStore, openDatabase, tables, type DatabaseHandle } from '../../src/db/index.js';
import {
  createSlackWebClient,
  createWebApiDigestPoster,
  DIGEST_QUEUE,
  digestSchedulerId,
  scheduleDigests,
  startDigestScheduler,
  type DeliveryResult,
  type DigestDeps,
} from '../../src/digest/index.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startFakeSlack, type FakeSlack } from './fake-slack.js';

const connection = { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null };
const CHANNEL = 'C0DIGEST';
/** Every second (BullMQ's cron accepts a seconds field): many firings, one day. */
const EVERY_SECOND = '* * * * * *';

describe('digest scheduling on Redis and PostgreSQL', () => {
  let t: TestDatabase;
  let slack: FakeSlack;
  let prefix: string;
  const queues: Queue[] = [];

  const queueOf = () => {
    const q = new Queue(DIGEST_QUEUE, { connection, prefix });
    queues.push(q);
    return q;
  };
  const depsFor = (handle: DatabaseHandle): DigestDeps => ({
    store: createStore(handle.db),
    poster: createWebApiDigestPoster(createSlackWebClient({ botToken: 'xoxb-test', apiUrl: slack.url }, { retries: 0 })),
    timeZone: 'UTC',
    chart: { width: 400, height: 200, scale: 1 },
  });
  /** One message per (channel, day) row, each sent: the digests table and Slack agree. */
  const expectOneDigestPerDay = async () => {
    const rows = await t.store.db.select().from(tables.digests);
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows.every((r) => r.channel === CHANNEL && r.sentAt !== null)).toBe(true);
    expect(slack.messages.map((m) => m.ts).sort()).toEqual(rows.map((r) => r.messageTs).sort());
    return rows;
  };

  beforeAll(async () => {
    t = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    await t.dispose();
  });
  beforeEach(async () => {
    await t.reset();
    slack = await startFakeSlack();
    prefix = `ks-test-digest-${randomBytes(4).toString('hex')}`;
    return async () => {
      for (const q of queues.splice(0)) {
        await q.obliterate({ force: true }).catch(() => {});
        await q.close();
      }
      await slack.close();
    };
  });

  it('keeps one scheduler per channel with the configured cron and zone, and removes stale ones', async () => {
    const queue = queueOf();
    await scheduleDigests(queue, { cron: '0 9 * * *', timezone: 'Europe/Berlin', channel: 'C0OLD' });
    await scheduleDigests(queue, { cron: '0 9 * * *', timezone: 'Europe/Berlin', channel: CHANNEL });
    const again = await scheduleDigests(queue, { cron: '0 9 * * *', timezone: 'Europe/Berlin', channel: CHANNEL });
    expect(again).toEqual({ scheduled: digestSchedulerId(CHANNEL), removed: [] });
    expect(await queue.getJobSchedulersCount()).toBe(1);
    const s = await queue.getJobScheduler(digestSchedulerId(CHANNEL));
    expect(s).toMatchObject({ key: 'digest-C0DIGEST', pattern: '0 9 * * *', tz: 'Europe/Berlin', template: { data: { channel: CHANNEL } } });
    // The next run is 09:00 on the Berlin clock, within the next day.
    const next = new Date(s!.next!);
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', timeStyle: 'medium' }).format(next)).toBe('09:00:00');
    expect(next.getTime() - Date.now()).toBeGreaterThan(0);
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(25 * 3600_000);
    // No channel configured: no digest scheduled at all.
    expect(await scheduleDigests(queue, { cron: '0 9 * * *', timezone: 'UTC', channel: undefined })).toEqual({ scheduled: null, removed: ['digest-C0DIGEST'] });
    expect(await queue.getJobSchedulersCount()).toBe(0);
  });

  it('an upsert whose next iteration is taken (another replica took it that instant) waits and goes in', async () => {
    // The race two replicas hit under load: one reads the clock, the other's worker takes that
    // iteration, then the first's upsert finds the job id taken (BullMQ code -10). Made here by hand:
    // the next 09:00's iteration id held by a job, freed a moment later.
    const config = { cron: '0 9 * * *', timezone: 'UTC', channel: CHANNEL };
    const scratch = new Queue(DIGEST_QUEUE, { connection, prefix: `${prefix}-scratch` });
    queues.push(scratch);
    await scheduleDigests(scratch, config);
    const iteration = (await scratch.getDelayed())[0]!.id!;
    expect(iteration).toMatch(/^repeat:digest-C0DIGEST:\d+$/);
    const queue = queueOf();
    await queue.add('digest', { channel: CHANNEL }, { jobId: iteration });
    const freed = delay(400).then(async () => (await queue.getJob(iteration))!.remove());
    expect(await scheduleDigests(queue, config)).toEqual({ scheduled: digestSchedulerId(CHANNEL), removed: [] });
    await freed;
    expect(await queue.getJobScheduler(digestSchedulerId(CHANNEL))).toMatchObject({ pattern: '0 9 * * *', tz: 'UTC' });
    // Held for good, it is BullMQ's error after a few tries, not a hang.
    await queue.obliterate({ force: true });
    await queue.add('digest', { channel: CHANNEL }, { jobId: iteration });
    await expect(scheduleDigests(queue, config)).rejects.toMatchObject({ code: -10 });
  });

  it('two scheduler instances running at once post exactly one digest', async () => {
    const handles = [await openDatabase({ kind: 'postgres', url: t.url! }), await openDatabase({ kind: 'postgres', url: t.url! })];
    const results: DeliveryResult[] = [];
    const config = { cron: EVERY_SECOND, timezone: 'UTC', channel: CHANNEL };
    const replicas = await Promise.all(handles.map((h) => startDigestScheduler({ connection, prefix, config, deps: depsFor(h) })));
    for (const r of replicas) r.worker.on('completed', (_job, result: DeliveryResult) => results.push(result));
    queues.push(replicas[0]!.queue);
    try {
      for (let waited = 0; results.length < 3 && waited < 15_000; waited += 100) await delay(100);
      expect(await replicas[0]!.queue.getJobSchedulersCount()).toBe(1);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
      await Promise.all(handles.map((h) => h.close()));
    }
    const rows = await expectOneDigestPerDay();
    expect(results.length).toBeGreaterThanOrEqual(3);
    expect(results.filter((r) => r.status === 'posted')).toHaveLength(rows.length);
    expect(results.filter((r) => r.status !== 'posted').every((r) => r.status === 'already_sent')).toBe(true);
  });

  it('two replica processes with their own connections post exactly one digest', async () => {
    const script = path.join(REPO_ROOT, 'test/digest/fixtures/replica.ts');
    const env = { DATABASE_URL: t.url!, QUEUE_PREFIX: prefix, SLACK_API_URL: slack.url, DIGEST_CHANNEL: CHANNEL, DIGEST_CRON: EVERY_SECOND, DURATION_MS: '3000' };
    const children = [0, 1].map(() => execa('node', ['--import', 'tsx', script], { cwd: REPO_ROOT, env, timeout: 60_000, stdin: 'pipe' }));
    // Both processes loaded and connected before either starts its scheduler: they run at the same time.
    await Promise.all(children.map((c) => new Promise<void>((resolve) => c.stdout!.on('data', (d: Buffer) => String(d).includes('ready') && resolve()))));
    for (const c of children) c.stdin!.write('go\n');
    const runs = await Promise.all(children);
    queues.push(new Queue(DIGEST_QUEUE, { connection, prefix }));
    const reports = runs.map((r) => JSON.parse(r.stdout.trim().split('\n').pop()!) as { pid: number; results: DeliveryResult[]; failed: string[] });
    expect(reports[0]!.pid).not.toBe(reports[1]!.pid);
    expect(reports.flatMap((r) => r.failed)).toEqual([]);
    const all = reports.flatMap((r) => r.results);
    const rows = await expectOneDigestPerDay();
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(all.filter((r) => r.status === 'posted')).toHaveLength(rows.length);
  });

  it('two different schedulers for one channel still post once: the store’s claim decides', async () => {
    const handles = [await openDatabase({ kind: 'postgres', url: t.url! }), await openDatabase({ kind: 'postgres', url: t.url! })];
    const results: DeliveryResult[] = [];
    // Replicas configured differently (one in a second queue): their jobs race for the same day.
    const replicas = await Promise.all([
      startDigestScheduler({ connection, prefix, config: { cron: EVERY_SECOND, timezone: 'UTC', channel: CHANNEL }, deps: depsFor(handles[0]!) }),
      startDigestScheduler({ connection, prefix, queueName: 'digest-other', config: { cron: EVERY_SECOND, timezone: 'UTC', channel: CHANNEL }, deps: depsFor(handles[1]!) }),
    ]);
    for (const r of replicas) r.worker.on('completed', (_job, result: DeliveryResult) => results.push(result));
    queues.push(...replicas.map((r) => r.queue));
    try {
      for (let waited = 0; results.length < 4 && waited < 15_000; waited += 100) await delay(100);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
      await Promise.all(handles.map((h) => h.close()));
    }
    const rows = await expectOneDigestPerDay();
    expect(results.filter((r) => r.status === 'posted')).toHaveLength(rows.length);
  });
});
