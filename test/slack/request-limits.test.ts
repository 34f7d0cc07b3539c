import { setTimeout as delay } from 'node:timers/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { MAX_BODY_BYTES } from '../../src/slack/receiver/request-checks.js';
import { createPostgresDatabase, createTempDir } from '../support/db.js';
import { startFakeSlack, type FakeSlack } from '../support/slack/fake-slack.js';
import { signSlackRequest, TEST_SIGNING_SECRET } from '../support/slack/signed-requests.js';
import { upload } from '../support/slack/upload.js';

// The attack of issue 17 against a real `kernelseek serve --role slack` process: bodies far over
// any Slack payload, unsigned, forged or signed, declared or chunked. Each is answered at once and
// the server's memory does not grow by the body (its peak RSS is read from /proc).
const MB = 1024 * 1024;
let pg: { url: string; drop(): Promise<void> };
let tmp: { dir: string; remove(): Promise<void> };
let fake: FakeSlack;
let child: ChildProcess;
let endpoint: string;
const prefix = `ks-test-limits-${randomBytes(4).toString('hex')}`;

async function status(pid: number): Promise<{ rssMb: number; peakMb: number }> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)![1]);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/** Peak RSS over `attack`, from a peak reset to the current RSS just before it (clear_refs 5). */
async function peakGrowthMb(pid: number, attack: () => Promise<unknown>): Promise<number> {
  await writeFile(`/proc/${pid}/clear_refs`, '5');
  const before = await status(pid);
  await attack();
  await delay(200);
  const after = await status(pid);
  return after.peakMb - before.rssMb;
}

beforeAll(async () => {
  pg = await createPostgresDatabase();
  tmp = await createTempDir('ks-limits-');
  fake = await startFakeSlack();
  child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/kernelseek.js'), 'serve', '--role', 'slack', '--port', '0'], {
    cwd: tmp.dir,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: pg.url,
      REDIS_URL: 'redis://127.0.0.1:6379',
      KERNELSEEK_QUEUE_PREFIX: prefix,
      KERNELSEEK_DATA_DIR: tmp.dir,
      KERNELSEEK_TASKS_DIR: path.join(REPO_ROOT, 'kernels'),
      ANTHROPIC_API_KEY: 'sk-ant-test-0000000000',
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET: TEST_SIGNING_SECRET,
      SLACK_API_URL: fake.apiUrl,
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 60_000);
    const poll = setInterval(() => {
      const m = /slack: HTTP on http:\/\/0\.0\.0\.0:(\d+)\/slack\/events/.exec(out);
      if (m) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    }, 50);
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
  endpoint = `http://127.0.0.1:${port}/slack/events`;
}, 90_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, delay(10_000)]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  await fake?.close();
  const redis = new Redis('redis://127.0.0.1:6379');
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
  await pg?.drop();
  await tmp?.remove();
});

const signed = () => signSlackRequest(TEST_SIGNING_SECRET, 'whatever the body is');

describe('the Slack endpoint refuses before it reads', () => {
  it('answers a 50 MB unsigned body with 401 within a second, and memory does not grow by it', async () => {
    let result: Awaited<ReturnType<typeof upload>> | undefined;
    const growth = await peakGrowthMb(child.pid!, async () => (result = await upload(endpoint, { bytes: 50 * MB })));
    expect(result!.status, result!.error).toBe(401);
    expect(result!.answeredMs).toBeLessThan(1000);
    expect(growth).toBeLessThan(50);
  });

  it('answers 50 MB with a forged but well-formed signature by its declared length: 413 at once', async () => {
    let result: Awaited<ReturnType<typeof upload>> | undefined;
    const growth = await peakGrowthMb(child.pid!, async () => (result = await upload(endpoint, { bytes: 50 * MB, headers: signed() })));
    expect(result!.status, result!.error).toBe(413);
    expect(result!.answeredMs).toBeLessThan(1000);
    expect(growth).toBeLessThan(50);
  });

  it('stops reading a chunked (undeclared) 50 MB body at the limit: 413, memory bounded by the limit', async () => {
    let result: Awaited<ReturnType<typeof upload>> | undefined;
    const growth = await peakGrowthMb(child.pid!, async () => (result = await upload(endpoint, { bytes: 50 * MB, chunked: true, headers: signed() })));
    expect(result!.status, result!.error).toBe(413);
    expect(result!.answeredMs).toBeLessThan(1000);
    expect(growth).toBeLessThan(50);
    // It stopped reading near the limit, rather than draining the rest.
    expect(result!.sentBytes).toBeLessThan(50 * MB);
  });

  it('refuses malformed signature headers before reading: 401 for each form', async () => {
    const forms: Record<string, string>[] = [
      { 'x-slack-signature': 'v0=not-hex', 'x-slack-request-timestamp': String(Math.floor(Date.now() / 1000)) },
      { 'x-slack-signature': `v1=${'a'.repeat(64)}`, 'x-slack-request-timestamp': String(Math.floor(Date.now() / 1000)) },
      { 'x-slack-signature': `v0=${'a'.repeat(64)}`, 'x-slack-request-timestamp': 'yesterday' },
      { 'x-slack-signature': `v0=${'a'.repeat(64)}` },
    ];
    for (const headers of forms) {
      let result: Awaited<ReturnType<typeof upload>> | undefined;
      const growth = await peakGrowthMb(child.pid!, async () => (result = await upload(endpoint, { bytes: 30 * MB, chunked: true, headers })));
      expect(result!.status, JSON.stringify(headers)).toBe(401);
      expect(result!.answeredMs).toBeLessThan(1000);
      expect(growth).toBeLessThan(25);
    }
  });

  it('refuses with 503 once bodies still arriving hold 16 MiB in all, and memory stays bounded', async () => {
    // Twelve signed uploads of 1.9 MB each, none finished: each is under the limit, together over the budget.
    let results: Awaited<ReturnType<typeof upload>>[] = [];
    const growth = await peakGrowthMb(child.pid!, async () => {
      results = await Promise.all(Array.from({ length: 12 }, () => upload(endpoint, { bytes: Math.floor(1.9 * MB), chunked: true, headers: signed(), holdOpenMs: 1500 })));
    });
    const refused = results.filter((r) => r.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(3);
    expect(results.filter((r) => r.status === undefined).length).toBeGreaterThanOrEqual(8);
    expect(growth).toBeLessThan(50);
  });

  it('still reads a body of the largest size Slack sends, and refuses it for its signature (401, not 413)', async () => {
    const result = await upload(endpoint, { bytes: MAX_BODY_BYTES - 1024, headers: signed() });
    expect(result.status, result.error).toBe(401);
  });
});
