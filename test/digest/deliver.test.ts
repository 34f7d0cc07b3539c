import { UnrecoverableError } from 'bullmq';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NonRetryableError } from '../../src/core/errors.js';
import {
  chartPixelSize,
  createSlackWebClient,
  createWebApiDigestPoster,
  deliverScheduledDigest,
  postDigestNow,
  processDigestJob,
  StoredDigestSchema,
  type DigestDeps,
} from '../../src/digest/index.js';
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/db.js';
import { at, insertEvaluation, insertQuestion, insertRun } from './factories.js';
import { startFakeSlack, type FakeSlack } from './fake-slack.js';
import { decodePng } from './png.js';
import { seedDigestScenario } from './scenario.js';

const CHANNEL = 'C0DIGEST';
const NINE = at('2026-03-14T09:00:00Z');
const CHART = { width: 600, height: 300, scale: 1 };

describe.each(BACKENDS)('posting the digest through Slack’s Web API (%s)', (backend) => {
  let t: TestDatabase;
  let slack: FakeSlack;
  let deps: DigestDeps;

  beforeAll(async () => {
    t = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await t.dispose();
  });
  beforeEach(async () => {
    await t.reset();
    slack = await startFakeSlack();
    const client = createSlackWebClient({ botToken: 'xoxb-test-token', apiUrl: slack.url }, { retries: 0 });
    deps = { store: t.store, poster: createWebApiDigestPoster(client), timeZone: 'UTC', chart: CHART, now: () => NINE };
    return () => slack.close();
  });

  it('posts the scheduled digest of a day once, whoever else asks for it', async () => {
    await seedDigestScenario(t.store);
    const first = await deliverScheduledDigest(deps, { channel: CHANNEL, scheduledAt: NINE, owner: 'job-a' });
    expect(first).toEqual({ status: 'posted', day: '2026-03-14', messageTs: slack.messages[0]!.ts, chart: 'posted' });
    // Another replica's job for the same day, and a later run of the same schedule that day.
    expect(await deliverScheduledDigest(deps, { channel: CHANNEL, scheduledAt: NINE, owner: 'job-b' })).toEqual({ status: 'already_sent', day: '2026-03-14' });
    expect(await deliverScheduledDigest(deps, { channel: CHANNEL, scheduledAt: at('2026-03-14T21:00:00Z'), owner: 'job-c' })).toMatchObject({ status: 'already_sent' });
    expect(slack.messages).toHaveLength(1);
    expect(slack.files).toHaveLength(1);
    expect(slack.messages[0]!.blocks[0]).toMatchObject({ type: 'header', text: { text: 'KernelSeek daily digest · 2026-03-14' } });

    const row = await t.store.digests.find(CHANNEL, '2026-03-14');
    expect(row).toMatchObject({ messageTs: slack.messages[0]!.ts, windowStart: at('2026-03-13T09:00:00Z'), windowEnd: NINE });
    expect(row!.sentAt).toBeInstanceOf(Date);
    const stored = StoredDigestSchema.parse(row!.payload);
    expect(stored).toMatchObject({ claimedBy: 'job-a', timeZone: 'UTC', chart: 'posted' });
    expect(stored.figures.evaluations.total).toBe(9);
    // The next day is a new digest.
    expect(await deliverScheduledDigest(deps, { channel: CHANNEL, scheduledAt: at('2026-03-15T09:00:00Z'), owner: 'job-d' })).toMatchObject({ status: 'posted', day: '2026-03-15' });
    expect(slack.messages).toHaveLength(2);
  });

  it('uses the digest zone for the day: 23:30 UTC is already tomorrow in Tokyo', async () => {
    const tokyo = { ...deps, timeZone: 'Asia/Tokyo' };
    expect(await deliverScheduledDigest(tokyo, { channel: CHANNEL, scheduledAt: at('2026-03-14T23:30:00Z'), owner: 'job-t' })).toMatchObject({ day: '2026-03-15' });
  });

  it('lets only one of two simultaneous claimants post', async () => {
    await seedDigestScenario(t.store);
    const results = await Promise.all(['job-1', 'job-2', 'job-3'].map((owner) => deliverScheduledDigest(deps, { channel: CHANNEL, scheduledAt: NINE, owner })));
    expect(results.filter((r) => r.status === 'posted')).toHaveLength(1);
    expect(slack.messages).toHaveLength(1);
  });

  it('resumes a failed attempt where it stopped: the chart is retried, the message is not repeated', async () => {
    await seedDigestScenario(t.store);
    slack.failNext('files.completeUploadExternal', { error: 'internal_error' });
    await expect(deliverScheduledDigest(deps, { channel: CHANNEL, scheduledAt: NINE, owner: 'job-a' })).rejects.toThrow(/internal_error/);
    expect(slack.messages).toHaveLength(1);
    expect(StoredDigestSchema.parse((await t.store.digests.find(CHANNEL, '2026-03-14'))!.payload).chart).toBe('pending');
    // The queue's retry of the same job.
    expect(await deliverScheduledDigest(deps, { channel: CHANNEL, scheduledAt: NINE, owner: 'job-a' })).toMatchObject({ status: 'posted', chart: 'posted' });
    expect(slack.messages).toHaveLength(1);
    expect(slack.files).toHaveLength(1);

    // A message that failed is posted by the retry, once.
    await t.reset();
    slack.failNext('chat.postMessage', { error: 'internal_error' });
    await expect(deliverScheduledDigest(deps, { channel: CHANNEL, scheduledAt: NINE, owner: 'job-b' })).rejects.toThrow();
    expect((await t.store.digests.find(CHANNEL, '2026-03-14'))!.sentAt).toBeNull();
    expect(await deliverScheduledDigest(deps, { channel: CHANNEL, scheduledAt: NINE, owner: 'job-b' })).toMatchObject({ status: 'posted', chart: 'none' });
    expect(slack.messages).toHaveLength(2);
  });

  // How the digest talks to Slack does not depend on the database: these run on PostgreSQL only.
  if (backend !== 'postgres') return;

  it('posts a digest now: the message with its blocks, then the chart as a PNG', async () => {
    await seedDigestScenario(t.store);
    const posted = await postDigestNow(deps, { channel: CHANNEL, since: '24h' });
    expect(posted).toMatchObject({ channel: CHANNEL, chart: 'posted', messageTs: slack.messages[0]!.ts });
    expect(slack.calls.map((c) => c.method)).toEqual(['chat.postMessage', 'files.getUploadURLExternal', 'files.completeUploadExternal']);
    expect(slack.calls.every((c) => c.token === 'xoxb-test-token')).toBe(true);
    const [message] = slack.messages;
    expect(message!.channel).toBe(CHANNEL);
    expect(message!.text).toBe('KernelSeek digest (24 h to Sat 14 Mar, 09:00 UTC): 2 active runs, 9 evaluations, $1.94 model cost; best: cpu_softmax (cpu) 2.00x.');
    expect(JSON.stringify(message!.blocks)).toContain('*rmsnorm (sm_90)*: *1.50x* baseline, 0.88x torch_compile (up from 1.25x)');
    const [file] = slack.files;
    expect(file).toMatchObject({ channel: CHANNEL, filename: 'kernelseek-digest-202603140900.png', title: 'KernelSeek digest' });
    const png = decodePng(file!.bytes);
    expect({ width: png.width, height: png.height }).toEqual(chartPixelSize(CHART));
  });

  it('brings gain attribution up to date before it lists the questions that preceded gains', async () => {
    await insertRun(t.store, { id: 'ks-attr', task: 'rmsnorm', createdAt: at('2026-03-13T08:00:00Z') });
    await insertEvaluation(t.store, { runId: 'ks-attr', seq: 1, task: 'rmsnorm', status: 'ok', correct: true, speedupVsBaseline: 1.25, finishedAt: at('2026-03-13T08:30:00Z') });
    // Asked after evaluation 1; nothing has attributed it yet.
    const id = await insertQuestion(t.store, { runId: 'ks-attr', source: 'human', author: 'U0FRANK', text: 'Is the limit you found real?', createdAt: at('2026-03-13T09:30:00Z'), evalSeqAtAsk: 1 });
    const speedups = [1.1, 2, 1.5, null, 1.9];
    for (const [i, s] of speedups.entries()) {
      await insertEvaluation(t.store, {
        runId: 'ks-attr', seq: i + 2, task: 'rmsnorm', status: s === null ? 'incorrect' : 'ok', correct: s !== null, speedupVsBaseline: s,
        finishedAt: at(`2026-03-13T1${i}:00:00Z`),
      });
    }
    const posted = await postDigestNow(deps, { channel: CHANNEL });
    expect(posted.figures.questions.top).toMatchObject([{ questionId: id, bestBefore: 1.25, bestAfter: 2, gain: 1.6, final: true, realizedAt: '2026-03-13T11:00:00.000Z' }]);
    expect(JSON.stringify(slack.messages[0]!.blocks)).toContain('• *1.60x* after “Is the limit you found real?” — <@U0FRANK>, `ks-attr` rmsnorm');
  });

  it('posts a quiet day as one line and no chart', async () => {
    const posted = await postDigestNow(deps, { channel: CHANNEL });
    expect(posted.chart).toBe('none');
    expect(slack.files).toHaveLength(0);
    expect(slack.messages[0]!.text).toContain('no activity');
  });

  it('keeps the message when only the chart fails, and says so', async () => {
    await seedDigestScenario(t.store);
    slack.failNext('files.getUploadURLExternal', { error: 'internal_error' });
    const posted = await postDigestNow(deps, { channel: CHANNEL });
    expect(posted.chart).toBe('failed');
    expect(posted.chartError).toMatch(/internal_error/);
    expect(slack.messages).toHaveLength(1);
  });

  it('fails at once, with a fix, when Slack refuses the channel', async () => {
    slack.failNext('chat.postMessage', { error: 'not_in_channel' });
    const error = await deliverScheduledDigest(deps, { channel: CHANNEL, scheduledAt: NINE, owner: 'job-a' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonRetryableError);
    expect((error as NonRetryableError).userMessage).toBe('The KernelSeek bot cannot post in C0DIGEST: check DIGEST_CHANNEL and invite the bot (/invite @KernelSeek).');
    expect((await t.store.digests.find(CHANNEL, '2026-03-14'))!.sentAt).toBeNull();
    // As a queue job (the next day's) the same failure is unrecoverable: BullMQ does not retry it.
    slack.failNext('chat.postMessage', { error: 'not_in_channel' });
    const nextDay = at('2026-03-15T09:00:00Z').getTime();
    const job = { id: 'job-a', queueQualifiedName: 'bull:digest', data: { channel: CHANNEL }, opts: { prevMillis: nextDay }, timestamp: nextDay };
    await expect(processDigestJob(deps, job)).rejects.toBeInstanceOf(UnrecoverableError);
    await expect(processDigestJob(deps, { ...job, data: { channel: '#general' } })).rejects.toThrow(/Slack channel id/);
  });
});
