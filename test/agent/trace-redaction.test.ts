import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configuredSecrets, redactString } from '../../src/agent/trace/redact.js';
import { runCli } from '../../src/cli/run-cli.js';
import { loadConfig, REPO_ROOT, type Env } from '../../src/config/index.js';
import { redactLogLine } from '../../src/core/logger.js';
import { endTurn, reply, toolUse } from '../support/anthropic/script.js';
import { startFakeAnthropic, type FakeAnthropic } from '../support/anthropic/server.js';
import { createTempDir } from '../support/db.js';

// Credentials in every URL form, hidden in traces and logs: the attack is a connection string (or
// its bare password) printed by a tool, written by the model, or named in a driver's error.
const PW = 'Rd5-hunter2-secret';

describe('credentials in URLs', () => {
  const forms: [string, string][] = [
    [`redis://:${PW}@cache:6379/0`, 'redis://:[REDACTED]@cache:6379/0'],
    [`rediss://default:${PW}@cache.example.com:6380`, 'rediss://default:[REDACTED]@cache.example.com:6380'],
    [`postgres://ks:${PW}@db:5432/ks?sslmode=require`, 'postgres://ks:[REDACTED]@db:5432/ks?sslmode=require'],
    [`postgresql://ks:p%40ss${PW}@db/ks`, 'postgresql://ks:[REDACTED]@db/ks'],
    [`amqp://u:${PW}/with@at@mq:5672`, 'amqp://u:[REDACTED]@mq:5672'],
    [`https://x-access-token:${PW}@github.com/org/repo.git`, 'https://x-access-token:[REDACTED]@github.com/org/repo.git'],
    [`https://ghx${PW}abcdefgh@github.com/org/repo.git`, 'https://[REDACTED]@github.com/org/repo.git'],
    [`https://api.example.com/v1/x?token=${PW}&page=2`, 'https://api.example.com/v1/x?token=[REDACTED]&page=2'],
    [`https://s3.example.com/b/k?X-Amz-Credential=AK%2F1&X-Amz-Signature=${PW}`, 'https://s3.example.com/b/k?X-Amz-Credential=[REDACTED]&X-Amz-Signature=[REDACTED]'],
    [`https://hooks.example.com/h?sig=${PW}`, 'https://hooks.example.com/h?sig=[REDACTED]'],
    [`https://proxy/?target=redis%3A%2F%2F%3A${PW}%40cache%3A6379`, 'https://proxy/?target=redis%3A%2F%2F%3A[REDACTED]%40cache%3A6379'],
  ];
  it.each(forms)('hides the credential in %s', (input, expected) => {
    const out = redactString(`connect failed: ${input} (retrying)`);
    expect(out).toBe(`connect failed: ${expected} (retrying)`);
    expect(out).not.toContain(PW);
  });

  it('leaves URLs without credentials, ports and e-mail addresses alone', () => {
    const plain = 'redis://cache:6379/0 https://host:8080/path/x ssh git@github.com:org/repo mail alice@example.com postgres://ks@db/ks';
    expect(redactString(plain)).toBe(plain);
  });

  it('collects the passwords of REDIS_URL and DATABASE_URL, so the bare value is hidden too', () => {
    const config = loadConfig({ REDIS_URL: `redis://:${PW}@cache:6379`, DATABASE_URL: 'postgres://ks:db-pass-9876@db/ks' });
    const secrets = configuredSecrets(config);
    expect(secrets).toEqual(expect.arrayContaining([PW, 'db-pass-9876']));
    expect(redactString(`the password is ${PW}; db-pass-9876`, secrets)).toBe('the password is [REDACTED]; [REDACTED]');
  });
});

describe('logs', () => {
  it('redacts a line whatever field carries the secret, and keeps it valid JSON', () => {
    const line = JSON.stringify({ level: 50, component: `redis://:${PW}@cache`, err: { type: 'Error', message: `ECONNREFUSED rediss://u:${PW}@c`, stack: `Error: x postgres://a:${PW}@h\n    at y` }, msg: `retry ?token=${PW}` });
    const out = redactLogLine(line);
    expect(out).not.toContain(PW);
    expect(JSON.parse(out)).toMatchObject({ level: 50, component: 'redis://:[REDACTED]@cache', err: { type: 'Error' } });
  });

  it("hides credentials in the real logger's output: message, fields, child bindings and errors", async () => {
    const script = [
      `import { createLogger } from ${JSON.stringify(path.join(REPO_ROOT, 'src/core/logger.ts'))};`,
      `const log = createLogger('info', { db: 'postgres://ks:${PW}@db/ks' });`,
      `log.error({ err: new Error('connect ECONNREFUSED redis://:${PW}@10.0.0.1:6379'), url: 'rediss://user:${PW}@cache:6380' }, 'retrying redis://:${PW}@host');`,
      `log.child({ target: 'https://api.example.com/v1?token=${PW}' }).warn('child %s', 'postgres://a:${PW}@h/db');`,
    ].join('\n');
    const { stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], { cwd: REPO_ROOT });
    const lines = stderr.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(stderr).not.toContain(PW);
    expect(lines[0]).toMatchObject({ msg: 'retrying redis://:[REDACTED]@host', err: { type: 'Error', message: 'connect ECONNREFUSED redis://:[REDACTED]@10.0.0.1:6379' } });
    expect(lines[1]).toMatchObject({ target: 'https://api.example.com/v1?token=[REDACTED]', msg: 'child postgres://a:[REDACTED]@h/db' });
  });
});

describe('kernelseek trace of a run configured with a password in REDIS_URL', () => {
  let tmp: { dir: string; remove(): Promise<void> };
  let server: FakeAnthropic;
  beforeAll(async () => {
    tmp = await createTempDir('ks-trace-redact-');
  });
  afterAll(async () => {
    await server?.close();
    await tmp?.remove();
  });

  async function kernelseek(args: string[], env: Env) {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (d) => (out += String(d)));
    stderr.on('data', (d) => (err += String(d)));
    const code = await runCli(args, { env, cwd: tmp.dir, stdout, stderr, interactive: false, signal: new AbortController().signal, exitCode: 0, stdin: new PassThrough() });
    return { code, stdout: out, stderr: err };
  }

  it('does not contain the password, in any form the run wrote it', { timeout: 120_000 }, async () => {
    server = await startFakeAnthropic({
      script: [
        reply(toolUse('bash', { command: `echo "queue at redis://:${PW}@cache:6379/0"; echo 'password ${PW}'` })),
        endTurn(`The queue is redis://:${PW}@cache:6379 and its password is ${PW}.`),
      ],
      fallback: () => endTurn('Nothing more.'),
    });
    const env: Env = {
      KERNELSEEK_DATA_DIR: path.join(tmp.dir, 'data'),
      KERNELSEEK_TASKS_DIR: path.join(REPO_ROOT, 'kernels'),
      KERNELSEEK_PYTHON: '/usr/bin/python3',
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-trace-test-0000',
      KERNELSEEK_MODEL: 'claude-sonnet-4-6',
      REDIS_URL: `redis://:${PW}@cache:6379/0`,
      PATH: process.env.PATH,
      USER: 'tester',
      LOG_LEVEL: 'silent',
    };
    const run = await kernelseek(['run', 'cpu_softmax', '--autonomous', '--scenarios', 'quick', '--budget-steps', '2'], env);
    expect(run.code, run.stderr).toBe(0);
    const runId = /Run (ks-[a-z0-9]+) on cpu_softmax/.exec(run.stdout)![1]!;
    const file = path.join(tmp.dir, 'trace.jsonl');
    const trace = await kernelseek(['trace', runId, '--out', file], env);
    expect(trace.code, trace.stderr).toBe(0);
    const text = await readFile(file, 'utf8');
    // The run really carried the secret: the tool's output and the model's message are in the trace.
    expect(text).toContain('queue at redis://:[REDACTED]@cache:6379/0');
    expect(text).toContain('its password is [REDACTED]');
    expect(text).not.toContain(PW);
  });
});
