import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/index.js';
import { endTurn, userTexts } from '../support/anthropic/script.js';
import { createTestDatabase, TEST_POSTGRES_URL, type TestDatabase } from '../support/db.js';
import { useServiceFixture } from '../support/fixture.js';
import { threadReply } from '../support/slack/signed-requests.js';
import { startSlackStack, type SlackStack } from '../support/slack/slack-stack.js';

// A thread reply sent while PostgreSQL is unavailable (issue 15): the test's own database stops
// taking connections (ALLOW_CONNECTIONS false, its sessions terminated) — the shared server keeps
// running. The reply is answered 500 so Slack delivers it again, and that delivery is taken once;
// when no delivery will come (Slack's last retry), its author is told to send it again.
const fx = useServiceFixture<SlackStack>('postgres', 'ks-slack-outage-');

const CHANNEL = 'CKERNELS1';
const ALICE = 'UALICE001';
const BOB = 'UBOB00001';

function databaseName(url: string): string {
  return new URL(url).pathname.slice(1);
}

async function admin<T>(work: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await c.connect();
  try {
    return await work(c);
  } finally {
    await c.end();
  }
}

/** The test database refuses connections and loses the ones it had; returns the way back. */
async function takeDatabaseDown(url: string): Promise<() => Promise<void>> {
  const name = databaseName(url);
  await admin(async (c) => {
    await c.query(`alter database ${name} allow_connections false`);
    await c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
  });
  return () => admin(async (c) => void (await c.query(`alter database ${name} allow_connections true`)));
}

async function startRun(store: Store) {
  fx.service = await startSlackStack({ store, dataDir: fx.dataDir, anthropic: { fallback: () => endTurn('Done for now.') } });
  const { fake, sender } = fx.service;
  await sender.command({ text: 'start cpu_softmax timeout=10m', user: ALICE, channel: CHANNEL, responseUrl: fake.responseUrl('start') });
  await fake.waitFor((f) => f.messages.some((m) => JSON.stringify(m.blocks ?? []).includes('ks_ask_bank')), 30_000, 'the decision card');
  return fake.messages[0]!;
}

const asked = (text: string) => fx.service!.anthropic.requests.filter((r) => userTexts(r).join('\n').includes(text)).length;

describe('a thread reply during a database outage', () => {
  let restore: (() => Promise<void>) | undefined;
  // Before the fixture empties the tables: a test that failed mid-outage must not take the rest down.
  afterEach(async () => {
    await restore?.();
    restore = undefined;
  });

  it('is answered 500 while the database is down, and Slack’s next delivery is taken, once', async () => {
    const root = await startRun(fx.db.store);
    const QUESTION = 'Which loop dominates the time now?';
    const event = threadReply({ channel: CHANNEL, threadTs: root.ts, user: BOB, text: QUESTION });
    restore = await takeDatabaseDown(fx.db.url!);
    const during = await fx.service!.sender.event(event, { eventId: 'EvOUTAGE1' });
    expect(during.status).toBe(500);
    await restore();
    restore = undefined;

    const retry = await fx.service!.sender.event(event, { eventId: 'EvOUTAGE1', retryNum: 1, retryReason: 'http_error' });
    expect(retry.status).toBe(200);
    await fx.service!.fake.waitFor(() => asked(QUESTION) > 0, 30_000, 'the question to reach the model');
    const questions = await fx.db.store.questions.forRun((await fx.db.store.runs.findByThread(CHANNEL, root.ts))!.id);
    expect(questions.filter((q) => q.text === QUESTION)).toHaveLength(1);
    // A later redelivery of the same event is a duplicate again.
    expect((await fx.service!.sender.event(event, { eventId: 'EvOUTAGE1', retryNum: 2 })).status).toBe(200);
  });

  it('tells its author to send it again when Slack will not deliver it again (its last retry)', async () => {
    const root = await startRun(fx.db.store);
    const event = threadReply({ channel: CHANNEL, threadTs: root.ts, user: BOB, text: 'What is left to try?' });
    restore = await takeDatabaseDown(fx.db.url!);
    const last = await fx.service!.sender.event(event, { eventId: 'EvOUTAGE2', retryNum: 3, retryReason: 'http_error' });
    expect(last.status).toBe(500);
    await fx.service!.fake.waitFor((f) => f.callsOf('chat.postEphemeral').some((c) => c.args.user === BOB), 5000, 'the note to Bob');
    const note = fx.service!.fake.callsOf('chat.postEphemeral').find((c) => c.args.user === BOB)!;
    expect(note.args).toMatchObject({ channel: CHANNEL, thread_ts: root.ts });
    expect(String(note.args.text)).toMatch(/could not take your message.*send it again/);
    await restore();
    restore = undefined;
  });

  describe('when the event id was stored but the reply was not', () => {
    // The event ids live in a database that stays up; the runs in the one that goes down, so the
    // reply fails after its id was marked seen. Without forgetting it, Slack's retry is dropped.
    let ids: TestDatabase;
    beforeAll(async () => {
      ids = await createTestDatabase('pglite');
    });
    afterAll(async () => {
      await ids?.dispose();
    });

    it('forgets the id, so the redelivery is taken', async () => {
      const store: Store = { ...fx.db.store, slackEvents: ids.store.slackEvents };
      const root = await startRun(store);
      const QUESTION = 'What does the profile say about the tail?';
      const event = threadReply({ channel: CHANNEL, threadTs: root.ts, user: BOB, text: QUESTION });
      restore = await takeDatabaseDown(fx.db.url!);
      const during = await fx.service!.sender.event(event, { eventId: 'EvOUTAGE3' });
      expect(during.status).toBe(500);
      await restore();
      restore = undefined;
      const retry = await fx.service!.sender.event(event, { eventId: 'EvOUTAGE3', retryNum: 1 });
      expect(retry.status).toBe(200);
      await fx.service!.fake.waitFor(() => asked(QUESTION) > 0, 30_000, 'the question to reach the model');
      expect(fx.service!.fake.callsOf('chat.postEphemeral').filter((c) => c.args.user === BOB)).toHaveLength(0);
    });
  });
});
