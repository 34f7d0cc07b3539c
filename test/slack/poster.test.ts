import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { createSlackWebClient } from '../../src/slack/client.js';
import { createSlackPoster, type PosterOptions, type SlackPoster } from '../../src/slack/poster/poster.js';
import { startFakeSlack, type FakeSlack } from '../support/slack/fake-slack.js';

let fake: FakeSlack;
let poster: SlackPoster;

function makePoster(options: Partial<PosterOptions> = {}): SlackPoster {
  return createSlackPoster({
    client: createSlackWebClient({ token: 'xoxb-test', apiUrl: fake.apiUrl }),
    logger: silentLogger,
    pacing: { messageIntervalMs: 100, updateIntervalMs: 100, ephemeralIntervalMs: 50, reactionIntervalMs: 50 },
    backoffMs: 50,
    ...options,
  });
}

beforeEach(async () => {
  fake = await startFakeSlack();
});

afterEach(async () => {
  await poster?.close(0);
  await fake.close();
});

describe('Slack poster', () => {
  it('paces messages per channel (about one per interval) while other channels proceed in parallel', async () => {
    poster = makePoster({ pacing: { messageIntervalMs: 250 } });
    const sends = [];
    for (let i = 0; i < 4; i++) {
      sends.push(poster.postMessage({ channel: 'C1', text: `a${i}` }));
      sends.push(poster.postMessage({ channel: 'C2', text: `b${i}` }));
    }
    const results = await Promise.all(sends);
    expect(results.every((r) => r.ok)).toBe(true);
    for (const channel of ['C1', 'C2']) {
      const times = fake.callsOf('chat.postMessage').filter((c) => c.args.channel === channel).map((c) => c.at);
      expect(times).toHaveLength(4);
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(240);
    }
    // Two channels in parallel: 4 messages each take ~3 intervals, not ~7.
    const all = fake.callsOf('chat.postMessage').map((c) => c.at);
    expect(Math.max(...all) - Math.min(...all)).toBeLessThan(6 * 250);
  });

  it('honours Retry-After on a 429 and keeps the messages of a thread in order', async () => {
    poster = makePoster();
    const root = await poster.postMessage({ channel: 'C1', text: 'root' });
    expect(root.ok).toBe(true);
    const threadTs = (root as { ts: string }).ts;
    fake.rateLimit('chat.postMessage', { times: 2, retryAfter: 1 });
    const texts = Array.from({ length: 6 }, (_, i) => `reply ${i}`);
    const results = await Promise.all(texts.map((text) => poster.postMessage({ channel: 'C1', threadTs, text })));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(fake.thread('C1', threadTs).map((m) => m.text)).toEqual(['root', ...texts]);

    const calls = fake.callsOf('chat.postMessage');
    const limited = calls.filter((c) => c.outcome === 'rate_limited');
    expect(limited).toHaveLength(2);
    // The call after each 429 waited at least Retry-After (1 s).
    for (const l of limited) {
      const next = calls.find((c) => c.at > l.at && c !== l);
      expect(next!.at - l.at).toBeGreaterThanOrEqual(990);
    }
    expect(poster.stats().rateLimited).toBe(2);
  });

  it('coalesces pending edits of one message: only the latest state is sent, every caller hears back', async () => {
    poster = makePoster({ pacing: { updateIntervalMs: 300 } });
    const root = (await poster.postMessage({ channel: 'C1', text: 'card v0' })) as { ts: string };
    const edits = Array.from({ length: 20 }, (_, i) => poster.updateMessage({ channel: 'C1', ts: root.ts, text: `card v${i + 1}` }));
    const results = await Promise.all(edits);
    expect(results.every((r) => r.ok)).toBe(true);
    const updates = fake.callsOf('chat.update');
    // The first edit goes out at once; the 19 queued behind it collapse into one.
    expect(updates.length).toBeLessThanOrEqual(2);
    expect(fake.message('C1', root.ts)!.text).toBe('card v20');
    expect(poster.stats().coalesced).toBeGreaterThanOrEqual(18);
  });

  it('loses no status update in a 429 storm: the final state arrives after the storm', async () => {
    poster = makePoster({ pacing: { updateIntervalMs: 50 } });
    const root = (await poster.postMessage({ channel: 'C1', text: 'card v0' })) as { ts: string };
    fake.rateLimit('chat.update', { times: 3, retryAfter: 1 });
    const first = poster.updateMessage({ channel: 'C1', ts: root.ts, text: 'card v1' });
    await delay(300);
    const later = [2, 3, 4].map((v) => poster.updateMessage({ channel: 'C1', ts: root.ts, text: `card v${v}` }));
    const results = await Promise.all([first, ...later]);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(fake.message('C1', root.ts)!.text).toBe('card v4');
    const updates = fake.callsOf('chat.update');
    expect(updates.filter((c) => c.outcome === 'rate_limited')).toHaveLength(3);
    expect(updates.filter((c) => c.outcome === 'ok').length).toBeGreaterThanOrEqual(1);
    const span = updates.at(-1)!.at - updates[0]!.at;
    expect(span).toBeGreaterThanOrEqual(2900);
  });

  it('gives up on errors Slack will not change its mind about, once, and carries on with other calls', async () => {
    poster = makePoster();
    fake.fail('chat.postMessage', { error: 'channel_not_found', match: (a) => a.channel === 'CGONE' });
    const [gone, fine] = await Promise.all([
      poster.postMessage({ channel: 'CGONE', text: 'hello' }),
      poster.postMessage({ channel: 'C1', text: 'hello' }),
    ]);
    expect(gone).toEqual({ ok: false, error: 'channel_not_found' });
    expect(fine.ok).toBe(true);
    expect(fake.callsOf('chat.postMessage').filter((c) => c.args.channel === 'CGONE')).toHaveLength(1);
    expect(poster.stats().failed).toBe(1);
  });

  it('retries transient failures with backoff, a bounded number of times', async () => {
    poster = makePoster({ maxTransientRetries: 3 });
    fake.fail('chat.postMessage', { error: 'internal_error', times: 2 });
    expect((await poster.postMessage({ channel: 'C1', text: 'x' })).ok).toBe(true);
    expect(fake.callsOf('chat.postMessage')).toHaveLength(3);

    fake.fail('chat.postMessage', { error: 'service_unavailable', times: 10 });
    expect(await poster.postMessage({ channel: 'C1', text: 'y' })).toEqual({ ok: false, error: 'service_unavailable' });
    expect(fake.callsOf('chat.postMessage')).toHaveLength(3 + 4);
  });

  it('stops retrying after a bounded number of 429s', async () => {
    poster = makePoster({ maxRateLimitRetries: 3 });
    fake.rateLimit('reactions.add', { times: 100, retryAfter: 0 });
    const root = (await poster.postMessage({ channel: 'C1', text: 'x' })) as { ts: string };
    expect(await poster.addReaction({ channel: 'C1', ts: root.ts, name: 'eyes' })).toEqual({ ok: false, error: 'rate_limited' });
    expect(fake.callsOf('reactions.add')).toHaveLength(4);
  });

  it('caps text over Slack’s limit and posts the whole text as a file right after, in the same thread', async () => {
    poster = makePoster();
    const root = (await poster.postMessage({ channel: 'C1', text: 'root' })) as { ts: string };
    const long = 'x'.repeat(45_000) + ' THE END';
    const result = await poster.postMessage({ channel: 'C1', threadTs: root.ts, text: long });
    expect(result.ok).toBe(true);
    const reply = fake.thread('C1', root.ts)[1]!;
    expect(reply.text.length).toBeLessThanOrEqual(40_000);
    expect(reply.text).toContain('full text is in the attached file');
    expect(fake.files).toHaveLength(1);
    expect(fake.files[0]!.threadTs).toBe(root.ts);
    expect(fake.files[0]!.content.toString('utf8')).toBe(long);
  });

  it('falls back to text only when Slack refuses the blocks, instead of losing the message', async () => {
    poster = makePoster();
    const huge = { type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'y'.repeat(3500) } };
    const result = await poster.postMessage({ channel: 'C1', text: 'summary', blocks: [huge] });
    expect(result.ok).toBe(true);
    const calls = fake.callsOf('chat.postMessage');
    expect(calls.map((c) => c.outcome)).toEqual(['invalid_blocks', 'ok']);
    expect(fake.messages[0]!.text).toBe('summary');
  });

  it('uploads files with the v2 flow into a thread', async () => {
    poster = makePoster();
    const root = (await poster.postMessage({ channel: 'C1', text: 'root' })) as { ts: string };
    const result = await poster.uploadFile({ channel: 'C1', threadTs: root.ts, filename: 'kernel.cpp', content: 'int main() {}\n', title: 'best kernel' });
    expect(result.ok).toBe(true);
    expect(fake.callsOf('files.getUploadURLExternal')).toHaveLength(1);
    expect(fake.callsOf('files.completeUploadExternal')).toHaveLength(1);
    expect(fake.files[0]).toMatchObject({ filename: 'kernel.cpp', title: 'best kernel', channel: 'C1', threadTs: root.ts });
    expect(fake.files[0]!.content.toString()).toBe('int main() {}\n');
  });

  it('after close, drops what is queued and refuses new calls without throwing', async () => {
    poster = makePoster({ pacing: { messageIntervalMs: 10_000 } });
    const first = poster.postMessage({ channel: 'C1', text: '1' });
    const second = poster.postMessage({ channel: 'C1', text: '2' });
    expect((await first).ok).toBe(true);
    await poster.close(50);
    expect(await second).toEqual({ ok: false, error: 'poster_closed' });
    expect(await poster.postMessage({ channel: 'C1', text: '3' })).toEqual({ ok: false, error: 'poster_closed' });
    expect(fake.callsOf('chat.postMessage')).toHaveLength(1);
  });
});

describe('the broadcast guard at the poster (issue 39)', () => {
  const BROADCASTS = '<!channel> <!here|here> <!everyone> <!subteam^S0TEAM01|@kernels> <!group>';

  it('escapes every channel, workspace and group mention in every kind of call, and leaves our own syntax, plain text and file contents alone', async () => {
    poster = makePoster({ pacing: { statusIntervalMs: 10, unfurlIntervalMs: 10, viewIntervalMs: 10 } });
    const ours = '<@UALICE001> <#CKERNELS1> <!date^1767225600^{time}|00:00 UTC> <https://example.com/runs/ks-1|ks-1>';
    const section = (text: string) => ({ type: 'section' as const, text: { type: 'mrkdwn' as const, text } });
    const header = { type: 'header' as const, text: { type: 'plain_text' as const, text: `plain ${BROADCASTS}` } };
    await Promise.all([
      poster.postMessage({ channel: 'C1', text: `${BROADCASTS} ${ours}`, blocks: [header, section(BROADCASTS), { type: 'context', elements: [{ type: 'mrkdwn', text: BROADCASTS }] }] }),
      poster.updateMessage({ channel: 'C1', ts: '1.1', text: BROADCASTS, blocks: [{ type: 'section', fields: [{ type: 'mrkdwn', text: BROADCASTS }] }] }),
      poster.postEphemeral({ channel: 'C1', user: 'UALICE001', text: BROADCASTS }),
      poster.uploadFile({ channel: 'C1', filename: 'k.txt', content: BROADCASTS, title: BROADCASTS, initialComment: BROADCASTS }),
      poster.setThreadStatus({ channel: 'C1', threadTs: '1.1', status: BROADCASTS, loadingMessages: [BROADCASTS] }),
      poster.unfurl({ channel: 'C1', ts: '1.2', unfurls: { 'https://x': { blocks: [section(BROADCASTS)] } } }),
      poster.publishHome({ user: 'UALICE001', view: { type: 'home', blocks: [section(BROADCASTS)] } }),
    ]);
    await poster.idle();
    const sent = JSON.stringify(fake.calls.filter((c) => c.method !== 'upload').map((c) => c.args));
    // The only live ones left are in the plain-text header, which Slack never parses for mentions.
    const live = sent.match(/<!(channel|here|everyone|subteam|group)/g) ?? [];
    expect(live).toHaveLength(5);
    expect(sent).toContain(`plain ${BROADCASTS}`);
    expect(sent).toContain('&lt;!channel&gt; &lt;!here|here&gt; &lt;!everyone&gt; &lt;!subteam^S0TEAM01|@kernels&gt; &lt;!group&gt;');
    expect(sent).toContain(ours);
    // The file's bytes are what was uploaded.
    expect(fake.files.some((f) => f.content.toString('utf8') === BROADCASTS)).toBe(true);
  });
});
