import { setTimeout as delay } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { REPO_ROOT, type Env } from '../../src/config/index.js';
import { createStore, openDatabase, type DatabaseHandle } from '../../src/db/index.js';
import { startFakeAnthropic, type FakeAnthropic } from '../support/anthropic/server.js';
import { endTurn, userTexts } from '../support/anthropic/script.js';
import { createPostgresDatabase, createTempDir } from '../support/db.js';
import { startFakeSlack, type FakeSlack } from '../support/slack/fake-slack.js';
import { createSlackSender, TEST_SIGNING_SECRET, threadReply } from '../support/slack/signed-requests.js';

// `kernelseek serve` as a person runs it: migrations at start-up, the Bolt HTTP receiver, agent
// turns as BullMQ jobs on the real Redis, /healthz, and a clean shutdown on SIGTERM (the CLI
// context's abort signal).
let pg: { url: string; drop(): Promise<void> };
let tmp: { dir: string; remove(): Promise<void> };
let fake: FakeSlack;
let anthropic: FakeAnthropic;
const prefix = `ks-test-serve-${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  pg = await createPostgresDatabase();
  tmp = await createTempDir('ks-serve-');
});
afterEach(async () => {
  await fake?.close();
  await anthropic?.close();
});
afterAll(async () => {
  const redis = new Redis('redis://127.0.0.1:6379');
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
  await pg.drop();
  await tmp.remove();
});

interface Serving {
  output: () => string;
  stop(): Promise<number>;
  port: number;
}

async function startServe(args: string[], env: Env): Promise<Serving> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  stdout.on('data', (d) => (out += String(d)));
  stderr.on('data', (d) => (out += String(d)));
  const controller = new AbortController();
  const done = runCli(['serve', ...args], { env, cwd: tmp.dir, stdout, stderr, interactive: false, signal: controller.signal, exitCode: 0, stdin: new PassThrough() });
  const deadline = Date.now() + 30_000;
  let port: number | undefined;
  while (port === undefined) {
    const m = /health on http:\/\/0\.0\.0\.0:(\d+)\/healthz/.exec(out);
    if (m) port = Number(m[1]);
    else if (Date.now() > deadline) throw new Error(`serve did not start: ${out}`);
    else await Promise.race([done.then((code) => Promise.reject(new Error(`serve exited with ${code}: ${out}`))), delay(50)]);
  }
  return {
    output: () => out,
    port,
    async stop() {
      controller.abort();
      return done;
    },
  };
}

function serveEnv(extra: Env = {}): Env {
  return {
    DATABASE_URL: pg.url,
    REDIS_URL: 'redis://127.0.0.1:6379',
    KERNELSEEK_QUEUE_PREFIX: prefix,
    KERNELSEEK_DATA_DIR: tmp.dir,
    KERNELSEEK_TASKS_DIR: path.join(REPO_ROOT, 'kernels'),
    KERNELSEEK_PYTHON: '/usr/bin/python3',
    ANTHROPIC_API_KEY: 'sk-ant-test-0000000000',
    ANTHROPIC_BASE_URL: anthropic.url,
    SLACK_BOT_TOKEN: 'xoxb-test-token',
    SLACK_SIGNING_SECRET: TEST_SIGNING_SECRET,
    SLACK_API_URL: fake.apiUrl,
    LOG_LEVEL: 'silent',
    PATH: process.env.PATH,
    ...extra,
  };
}

describe('kernelseek serve', () => {
  it('migrates, serves Slack over HTTP with health, runs turns through BullMQ, and shuts down cleanly', async () => {
    fake = await startFakeSlack();
    const QUESTION = 'Which assumption have you not tested yet?';
    anthropic = await startFakeAnthropic({ script: [endTurn('Nothing more to try.')], fallback: () => endTurn('Still thinking.') });
    const serving = await startServe(['--port', '0'], serveEnv());
    expect(serving.output()).toMatch(/role all/);
    expect(serving.output()).toMatch(/agent: 4 turn\(s\) at once; 0 live run\(s\) resumed/);
    expect(serving.output()).toMatch(/slack: HTTP on http:\/\/0\.0\.0\.0:\d+\/slack\/events/);
    expect(serving.output()).toMatch(/scheduler: no DIGEST_CHANNEL, no daily digest/);

    const health = await fetch(`http://127.0.0.1:${serving.port}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true, checks: { database: { ok: true }, redis: { ok: true } } });

    const sender = createSlackSender(`http://127.0.0.1:${serving.port}/slack/events`);
    const res = await sender.command({ text: 'start cpu_softmax timeout=10m', user: 'UALICE001', channel: 'CKERNELS1', responseUrl: fake.responseUrl('start') });
    expect(res.status).toBe(200);
    await fake.waitFor((f) => f.messages.some((m) => JSON.stringify(m.blocks ?? []).includes('ks_ask_bank')), 30_000, 'the decision card (turn 0 ran as a BullMQ job)');
    const root = fake.messages[0]!;
    await sender.event(threadReply({ channel: 'CKERNELS1', threadTs: root.ts, user: 'UBOB00001', text: QUESTION }));
    // The delayed turn (waiting for the decision's deadline) was promoted when the question arrived.
    await fake.waitFor(() => anthropic.requests.some((r) => userTexts(r).join('\n').includes(QUESTION)), 30_000, 'the question to reach the model');

    // Paused at the next decision point, a question waits; resuming brings the waiting turn forward.
    await fake.waitFor((f) => f.messages.filter((m) => JSON.stringify(m.blocks ?? []).includes('Decision point:')).length >= 2, 30_000, 'the second decision card');
    await sender.event(threadReply({ channel: 'CKERNELS1', threadTs: root.ts, user: 'UALICE001', text: 'pause' }));
    await fake.waitFor((f) => JSON.stringify(f.message('CKERNELS1', root.ts)!.blocks).includes('Paused'), 10_000, 'the card to say Paused');
    const LATER = 'What changed since the last evaluation?';
    await sender.event(threadReply({ channel: 'CKERNELS1', threadTs: root.ts, user: 'UBOB00001', text: LATER }));
    await delay(500);
    expect(anthropic.requests.some((r) => userTexts(r).join('\n').includes(LATER))).toBe(false);
    await sender.event(threadReply({ channel: 'CKERNELS1', threadTs: root.ts, user: 'UALICE001', text: 'resume' }));
    await fake.waitFor(() => anthropic.requests.some((r) => userTexts(r).join('\n').includes(LATER)), 15_000, 'the question asked while paused to reach the model after resume');

    expect(await serving.stop()).toBe(0);
    expect(serving.output()).toContain('Shutting down');
    // Turns really went through the agent-turn queue.
    const redis = new Redis('redis://127.0.0.1:6379');
    const completed = await redis.zcard(`${prefix}:agent-turn:completed`);
    await redis.quit();
    expect(completed).toBeGreaterThanOrEqual(3);

    const handle: DatabaseHandle = await openDatabase({ kind: 'postgres', url: pg.url });
    const [run] = await createStore(handle.db).runs.list();
    await handle.close();
    expect(run).toMatchObject({ slackChannel: 'CKERNELS1', slackThreadTs: root.ts, status: 'waiting' });
  }, 120_000);

  it('runs the agent and scheduler roles alone with a bare /healthz, and refuses an unknown role', async () => {
    fake = await startFakeSlack();
    anthropic = await startFakeAnthropic({});
    const serving = await startServe(['--role', 'agent', '--port', '0'], serveEnv());
    expect(serving.output()).not.toMatch(/slack: HTTP/);
    const health = await fetch(`http://127.0.0.1:${serving.port}/healthz`);
    expect(health.status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${serving.port}/slack/events`, { method: 'POST' })).status).toBe(404);
    expect(await serving.stop()).toBe(0);

    // The scheduler role schedules the daily digest through the same poster.
    const scheduler = await startServe(['--role', 'scheduler', '--port', '0'], serveEnv({ DIGEST_CHANNEL: 'CDIGEST01' }));
    expect(scheduler.output()).toMatch(/scheduler: daily digest to CDIGEST01 at '0 9 \* \* \*' \(UTC\)/);
    expect((await fetch(`http://127.0.0.1:${scheduler.port}/healthz`)).status).toBe(200);
    expect(await scheduler.stop()).toBe(0);

    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (d) => (err += String(d)));
    const code = await runCli(['serve', '--role', 'everything'], { env: serveEnv(), cwd: tmp.dir, stdout, stderr, interactive: false, signal: new AbortController().signal, exitCode: 0, stdin: new PassThrough() });
    expect(code).toBe(1);
    expect(err).toMatch(/Unknown role 'everything'\. Use one of: all, slack, agent, scheduler/);
  }, 60_000);
});
