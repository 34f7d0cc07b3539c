/**
 * Slash-command ack latency with 50 concurrent commands.
 *
 * `kernelseek serve` runs as its own process (the real CLI: Bolt's HTTP receiver with signature
 * checks, the agent engine, agent turns as BullMQ jobs on the local Redis, PostgreSQL). This process
 * plays everything outside it: the fake Slack Web API, the fake Anthropic API (every turn ends at
 * once, so each run waits at a decision point) and Slack itself, sending signed slash commands.
 * Slack requires the ack within 3 s. For `start`, the run is created after the ack (task parsed,
 * git workspace initialised, first turn queued) while the next acks are measured.
 *
 *   npx tsx bench/slack-ack.bench.ts [rounds=3] [concurrency=50]
 */
import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { endTurn } from '../test/support/anthropic/script.js';
import { startFakeAnthropic } from '../test/support/anthropic/server.js';
import { createPostgresDatabase, createTempDir } from '../test/support/databases.js';
import { startFakeSlack } from '../test/support/slack/fake-slack.js';
import { createSlackSender, TEST_SIGNING_SECRET } from '../test/support/slack/signed-requests.js';

const rounds = Number(process.argv[2] ?? 3);
const concurrency = Number(process.argv[3] ?? 50);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
const fmt = (ms: number) => `${ms.toFixed(0)} ms`;

const pg = await createPostgresDatabase();
const tmp = await createTempDir('ks-bench-ack-');
const fake = await startFakeSlack();
const anthropic = await startFakeAnthropic({ fallback: () => endTurn('Done for now.') });
const prefix = `ks-bench-ack-${randomBytes(4).toString('hex')}`;

const child = spawn(process.execPath, [path.join(root, 'bin', 'kernelseek.js'), 'serve', '--port', '0'], {
  cwd: tmp.dir,
  env: {
    PATH: process.env.PATH,
    DATABASE_URL: pg.url,
    REDIS_URL: 'redis://127.0.0.1:6379',
    KERNELSEEK_QUEUE_PREFIX: prefix,
    KERNELSEEK_DATA_DIR: tmp.dir,
    KERNELSEEK_TASKS_DIR: path.join(root, 'kernels'),
    KERNELSEEK_PYTHON: '/usr/bin/python3',
    ANTHROPIC_API_KEY: 'sk-ant-bench-000000',
    ANTHROPIC_BASE_URL: anthropic.url,
    SLACK_BOT_TOKEN: 'xoxb-bench',
    SLACK_SIGNING_SECRET: TEST_SIGNING_SECRET,
    SLACK_API_URL: fake.apiUrl,
    LOG_LEVEL: 'error',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
child.stdout.on('data', (d) => (out += String(d)));
const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));

try {
  const deadline = Date.now() + 60_000;
  let port: number | undefined;
  while (port === undefined) {
    const m = /slack: HTTP on http:\/\/0\.0\.0\.0:(\d+)/.exec(out);
    if (m) port = Number(m[1]);
    else if (Date.now() > deadline || child.exitCode !== null) throw new Error(`serve did not start:\n${out}`);
    else await delay(50);
  }
  const sender = createSlackSender(`http://127.0.0.1:${port}/slack/events`);
  let n = 0;
  const send = (text: string, channel: string) => {
    n += 1;
    return sender.command({ text, user: `UBENCH${String(n % 100).padStart(3, '0')}`, channel, responseUrl: fake.responseUrl(`c${n}`) });
  };
  for (let i = 0; i < 5; i++) await send('help', 'CWARMUP01'); // first requests load code paths

  for (const kind of ['help', 'start'] as const) {
    const acks: number[] = [];
    const t0 = performance.now();
    for (let r = 0; r < rounds; r++) {
      const results = await Promise.all(
        Array.from({ length: concurrency }, (_, i) => send(kind === 'start' ? 'start cpu_softmax timeout=1h' : 'help', `CB${r}${String(i).padStart(3, '0')}X`)),
      );
      for (const res of results) {
        if (res.status !== 200) throw new Error(`a command was answered with HTTP ${res.status}`);
        acks.push(res.ms);
      }
    }
    const over = acks.filter((ms) => ms >= 3000).length;
    console.log(
      `/kernelseek ${kind}: ${acks.length} commands, ${rounds} rounds of ${concurrency} at once — ack p50 ${fmt(pct(acks, 50))}, p99 ${fmt(pct(acks, 99))}, max ${fmt(Math.max(...acks))}; over Slack's 3 s: ${over}`,
    );
    if (kind === 'start') {
      const expected = rounds * concurrency;
      await fake.waitFor((f) => f.callsOf('chat.update').filter((c) => JSON.stringify(c.args.blocks ?? '').includes('Waiting for a question')).length >= expected, 600_000, 'every run to reach its first decision');
      console.log(`  all ${expected} runs created and at their first decision point ${((performance.now() - t0) / 1000).toFixed(1)} s after the first command (work queued after the ack)`);
    }
  }
} finally {
  child.kill('SIGTERM');
  const code = await Promise.race([exited, delay(20_000, -1)]);
  if (code === -1) child.kill('SIGKILL');
  const redis = new Redis('redis://127.0.0.1:6379');
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
  await fake.close();
  await anthropic.close();
  await pg.drop();
  await tmp.remove();
}
