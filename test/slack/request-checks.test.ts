import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { endTurn } from '../support/anthropic/script.js';
import { useServiceFixture } from '../support/fixture.js';
import { signSlackRequest, TEST_SIGNING_SECRET, threadReply } from '../support/slack/signed-requests.js';
import { startSlackStack, type SlackStack } from '../support/slack/slack-stack.js';

// Signed requests that are genuine but must not act: outside Slack's ±5-minute window (either
// way), or sent a second time (a replay of a captured request). Through real HTTP into the app.
const fx = useServiceFixture<SlackStack>('postgres', 'ks-slack-checks-');

const CHANNEL = 'CKERNELS1';
const ALICE = 'UALICE001';
const now = () => Math.floor(Date.now() / 1000);
const settle = () => delay(400);

async function runsCountReaches(n: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await fx.db.store.runs.list()).length < n) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} run(s)`);
    await delay(50);
  }
}

describe('signed requests are refused outside their window and act once', () => {
  it('refuses a timestamp 10 minutes ahead or behind, and accepts one 4 minutes ahead', async () => {
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir });
    const { fake, sender } = fx.service;
    const ahead = await sender.command({ text: 'help', user: ALICE, channel: CHANNEL, responseUrl: fake.responseUrl('ahead') }, { timestamp: now() + 10 * 60 });
    expect(ahead.status).toBe(401);
    expect(ahead.text).toMatch(/ahead of this server's clock/);
    const behind = await sender.command({ text: 'help', user: ALICE, channel: CHANNEL, responseUrl: fake.responseUrl('behind') }, { timestamp: now() - 10 * 60 });
    expect(behind.status).toBe(401);
    const event = await sender.event(threadReply({ channel: CHANNEL, threadTs: '1.0', user: ALICE, text: 'stop' }), { timestamp: now() + 3600 });
    expect(event.status).toBe(401);
    await settle();
    expect(fake.responses).toHaveLength(0);

    const within = await sender.command({ text: 'help', user: ALICE, channel: CHANNEL, responseUrl: fake.responseUrl('within') }, { timestamp: now() + 4 * 60 });
    expect(within.status).toBe(200);
    await fake.waitFor((f) => f.responses.some((r) => r.id === 'within'), 5000, 'the help reply');
  });

  it('starts one run when the same signed slash command is sent twice', async () => {
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir, anthropic: { fallback: () => endTurn('Done.') } });
    const { fake, sender } = fx.service;
    const first = await sender.command({ text: 'start cpu_softmax', user: ALICE, channel: CHANNEL, responseUrl: fake.responseUrl('start') });
    expect(first.status).toBe(200);
    const replay = await sender.raw(first.request.body, first.request.headers);
    expect(replay.status).toBe(200);
    await runsCountReaches(1);
    await settle();
    await fx.service.poster.idle();
    expect(await fx.db.store.runs.list()).toHaveLength(1);
    expect(fake.messages.filter((m) => m.channel === CHANNEL && !m.threadTs)).toHaveLength(1);

    // The same command typed again is a new request (Slack signs it afresh) and does act.
    await sender.command({ text: 'start cpu_softmax', user: ALICE, channel: CHANNEL, responseUrl: fake.responseUrl('again') });
    await runsCountReaches(2);
  });

  it('acts once on a replayed button press and a replayed event without an event id', async () => {
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir, anthropic: { fallback: () => endTurn('Done.') } });
    const { fake, sender } = fx.service;
    await sender.command({ text: 'start cpu_softmax timeout=10m', user: ALICE, channel: CHANNEL, responseUrl: fake.responseUrl('start') });
    await fake.waitFor((f) => f.messages.some((m) => JSON.stringify(m.blocks ?? []).includes('ks_ask_bank')), 20_000, 'the decision card');
    const root = fake.messages[0]!;
    const [run] = await fx.db.store.runs.list();

    // `budget +5` with no event id, delivered twice: the budget grows once.
    const reply = threadReply({ channel: CHANNEL, threadTs: root.ts, user: ALICE, text: 'budget +5' });
    const sent = await sender.event(reply, { eventId: null });
    expect(sent.status).toBe(200);
    const again = await sender.raw(sent.request.body, sent.request.headers);
    expect(again.status).toBe(200);
    await settle();
    expect((await fx.db.store.runs.get(run!.id))!.budgetEvals).toBe(run!.budgetEvals + 5);

    // A press of "Ask from the bank", delivered twice: one private note, one question.
    const card = fake.messages.find((m) => JSON.stringify(m.blocks ?? []).includes('ks_ask_bank'))!;
    const press = await sender.action({ actionId: 'ks_ask_bank', value: run!.id, user: ALICE, channel: CHANNEL, messageTs: card.ts, threadTs: root.ts, responseUrl: fake.responseUrl('press') });
    expect(press.status).toBe(200);
    expect((await sender.raw(press.request.body, press.request.headers)).status).toBe(200);
    await settle();
    await fx.service.poster.idle();
    const notes = fake.callsOf('chat.postEphemeral').filter((c) => c.args.user === ALICE && /bank will ask/.test(String(c.args.text)));
    expect(notes).toHaveLength(1);
  });

  it('answers Slack\'s url_verification and ssl_check, and refuses a forged url_verification', async () => {
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir });
    const { sender } = fx.service;
    const body = JSON.stringify({ type: 'url_verification', challenge: 'c-123', token: 't' });
    const verified = await sender.raw(body, { 'content-type': 'application/json', ...signSlackRequest(TEST_SIGNING_SECRET, body) });
    expect(verified.status).toBe(200);
    expect(JSON.parse(verified.text)).toEqual({ challenge: 'c-123' });
    expect((await sender.raw(body, { 'content-type': 'application/json' })).status).toBe(401);
    const ssl = await sender.raw('ssl_check=1&token=t', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(ssl.status).toBe(200);
    // An unsigned form post that is not an ssl_check (a smuggled command) is refused.
    const smuggled = await sender.raw('command=%2Fkernelseek&text=start+cpu_softmax&user_id=U1&channel_id=C1', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(smuggled.status).toBe(401);
  });
});
