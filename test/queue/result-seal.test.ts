import { mkdir, stat, writeFile, chmod } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/core/errors.js';
import { loadResultKey, resultKeyFile, resultKeyFromSecret } from '../../src/queue/result-key.js';
import { canonicalJson, openSeal, payloadDigest, sealResult, type SealBinding } from '../../src/queue/result-seal.js';
import { createTempDir } from '../support/db.js';

const KEY = resultKeyFromSecret('k'.repeat(20) + '0123456789abcdef', 'the test key');
const OTHER = resultKeyFromSecret('o'.repeat(20) + '0123456789abcdef', 'another key');

const payload = { task: 'cpu_softmax', source: 'extern "C" int softmax_rows() { return 0; }', fileName: 'kernel.cpp', scenarios: 'all', arch: 'cpu', runId: 'r1', seq: 3 };
/** Shaped like an evaluation outcome: what a forger would want to change is in here. */
const outcome = {
  status: 'ok',
  wallSeconds: 4.2,
  jobId: 'eval:r1:3',
  worker: 'host/cpu',
  gpu: null,
  result: {
    status: 'ok',
    correct: true,
    summary: { speedup_vs_baseline_geomean: 1.07, correct: 3, total: 3 },
    scenarios: [
      { id: 'a', correct: true, time_ms: 0.5, baseline_ms: 0.52, params: { rows: 7, cols: 33 } },
      { id: 'b', correct: true, time_ms: 1.5, baseline_ms: 1.61, params: { rows: 64, cols: 1024 } },
    ],
    messages: ['fine'],
  },
};
const binding: SealBinding = { kind: 'evaluate', jobId: 'eval:r1:3', payload };
const expected = { kind: 'evaluate' as const, jobId: 'eval:r1:3', payloadDigest: payloadDigest('evaluate', payload) };

/** What Redis gives back: a JSON round trip. */
const viaRedis = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

function leafPaths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...at, Array.isArray(value) ? Number(k) : k]));
  return [at];
}

function changed(value: unknown, at: (string | number)[]): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let node = copy;
  for (const k of at.slice(0, -1)) node = node[k] as Record<string | number, unknown>;
  const last = at[at.length - 1]!;
  const old = node[last];
  node[last] = typeof old === 'number' ? old * 7.5 + 1 : typeof old === 'boolean' ? !old : old === null ? 'forged' : `${String(old)}x`;
  return copy;
}

describe('result seals', () => {
  it('opens a genuine result to exactly what the worker returned, however Redis orders its keys', () => {
    const sealed = viaRedis(sealResult(KEY, binding, outcome));
    const opened = openSeal(KEY, expected, sealed);
    expect(opened).toMatchObject({ ok: true, value: outcome });
    // Re-serialised with the keys in reverse order at every level: the same content.
    const reversed = JSON.parse(JSON.stringify(sealed, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v))) as unknown;
    expect(canonicalJson(reversed)).toBe(canonicalJson(sealed));
    expect(openSeal(KEY, expected, reversed).ok).toBe(true);
  });

  it('refuses a result with any single value changed after sealing (every leaf of it, seal fields included)', () => {
    const sealed = viaRedis(sealResult(KEY, binding, outcome));
    const paths = leafPaths(sealed);
    expect(paths.length).toBeGreaterThan(25);
    for (const at of paths) {
      const opened = openSeal(KEY, expected, changed(sealed, at));
      expect(opened.ok, `changing ${at.join('.')} went unnoticed`).toBe(false);
    }
    const forged = openSeal(KEY, expected, changed(sealed, ['result', 'summary', 'speedup_vs_baseline_geomean']));
    expect(forged).toMatchObject({ ok: false, keyMismatch: false, reason: 'its seal does not match its content: it was changed after a worker sealed it, or forged' });
  });

  it('refuses added and removed fields, including a `__proto__` key', () => {
    const sealed = viaRedis(sealResult(KEY, binding, outcome)) as Record<string, unknown>;
    expect(openSeal(KEY, expected, { ...sealed, extra: 1 }).ok).toBe(false);
    const { gpu: _gpu, ...without } = sealed;
    expect(openSeal(KEY, expected, without).ok).toBe(false);
    const text = JSON.stringify(sealed).replace('{"status"', '{"__proto__":{"status":"ok"},"status"');
    expect(openSeal(KEY, expected, JSON.parse(text)).ok).toBe(false);
  });

  it('refuses what no worker sealed, naming why', () => {
    expect(openSeal(KEY, expected, outcome)).toMatchObject({ ok: false, reason: 'it carries no seal: no KernelSeek worker produced it' });
    for (const junk of [null, 'ok', 7.5, [outcome]]) expect(openSeal(KEY, expected, junk)).toMatchObject({ ok: false, reason: 'it is not a sealed result (no object came back)' });
    const sealed = viaRedis(sealResult(KEY, binding, outcome));
    expect(openSeal(KEY, expected, { ...sealed, seal: { ...sealed.seal, mac: 'f'.repeat(63) } })).toMatchObject({ ok: false, reason: 'its seal is malformed' });
    expect(openSeal(KEY, expected, { ...sealed, seal: { ...sealed.seal, v: 2 } })).toMatchObject({ ok: false, reason: 'its seal is malformed' });
  });

  it('refuses a result sealed under another key, naming both key ids (a configuration mistake or a forgery)', () => {
    const opened = openSeal(KEY, expected, viaRedis(sealResult(OTHER, binding, outcome)));
    expect(opened).toMatchObject({ ok: false, keyMismatch: true });
    if (opened.ok) return;
    expect(opened.reason).toBe(`it is sealed with result key ${OTHER.id}, and this dispatcher holds key ${KEY.id} (the test key): a worker with another KERNELSEEK_RESULT_KEY, or a forgery`);
  });

  it('refuses a genuine result of other work: another job, another kind, another candidate, run or evaluation number', () => {
    const genuine = (b: typeof binding) => viaRedis(sealResult(KEY, b, outcome));
    expect(openSeal(KEY, expected, genuine({ ...binding, jobId: 'eval:r1:2' }))).toMatchObject({ ok: false, reason: 'it is the sealed result of job eval:r1:2, not of eval:r1:3' });
    expect(openSeal(KEY, expected, genuine({ ...binding, kind: 'gpu-bash' }))).toMatchObject({ ok: false, reason: 'it is the sealed result of a gpu-bash job, not of this evaluate job' });
    for (const other of [{ source: `${payload.source}\n` }, { runId: 'r2' }, { seq: 4 }, { scenarios: 'quick' }, { task: 'other_task' }]) {
      const opened = openSeal(KEY, expected, genuine({ ...binding, payload: { ...payload, ...other } }));
      expect(opened, JSON.stringify(other)).toMatchObject({ ok: false, reason: expect.stringMatching(/^it is the sealed result of other work under this job id/) });
    }
  });

  it('binds the payload whatever order its keys come in', () => {
    const shuffled = Object.fromEntries(Object.entries(payload).reverse());
    expect(payloadDigest('evaluate', shuffled)).toBe(payloadDigest('evaluate', payload));
    expect(payloadDigest('gpu-bash', payload)).not.toBe(payloadDigest('evaluate', payload));
  });
});

describe('the result key', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  beforeAll(async () => {
    tmp = await createTempDir('ks-result-key-');
  });
  afterAll(async () => {
    await tmp?.remove();
  });

  it('refuses a short KERNELSEEK_RESULT_KEY with how to make one, without echoing it', async () => {
    const config = loadConfig({ KERNELSEEK_DATA_DIR: tmp.dir, KERNELSEEK_RESULT_KEY: 'hunter2-short' });
    const error = await loadResultKey(config).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain('KERNELSEEK_RESULT_KEY: the result key must be at least 32 characters (it has 13): generate one with `openssl rand -hex 32`');
    expect((error as ConfigError).message).not.toContain('hunter2');
  });

  it('uses KERNELSEEK_RESULT_KEY when set; its id names it without revealing it', async () => {
    const secret = 'a-long-enough-secret-for-the-hmac-0123456789';
    const key = await loadResultKey(loadConfig({ KERNELSEEK_DATA_DIR: tmp.dir, KERNELSEEK_RESULT_KEY: secret }));
    expect(key).toMatchObject({ source: 'KERNELSEEK_RESULT_KEY', id: expect.stringMatching(/^[0-9a-f]{12}$/) });
    expect(key.secret.toString()).toBe(secret);
    expect(secret).not.toContain(key.id);
  });

  it('without it, creates one key file (0600, in a 0700 folder) that every process on the data dir shares', async () => {
    const config = loadConfig({ KERNELSEEK_DATA_DIR: path.join(tmp.dir, 'shared') });
    // Started together, as serve and a gpu-worker may be: one file, one key.
    const keys = await Promise.all([loadResultKey(config), loadResultKey(config), loadResultKey(config)]);
    expect(new Set(keys.map((k) => k.id)).size).toBe(1);
    expect(keys[0]!.source).toBe(resultKeyFile(config));
    expect((await stat(resultKeyFile(config))).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(resultKeyFile(config)))).mode & 0o777).toBe(0o700);
    expect((await loadResultKey(config)).id).toBe(keys[0]!.id);
    const elsewhere = await loadResultKey(loadConfig({ KERNELSEEK_DATA_DIR: path.join(tmp.dir, 'elsewhere') }));
    expect(elsewhere.id).not.toBe(keys[0]!.id);
  });

  it('refuses a key file other users can read, saying how to fix it', async () => {
    const config = loadConfig({ KERNELSEEK_DATA_DIR: path.join(tmp.dir, 'loose') });
    await mkdir(path.dirname(resultKeyFile(config)), { recursive: true });
    await writeFile(resultKeyFile(config), 'x'.repeat(64));
    await chmod(resultKeyFile(config), 0o644);
    await expect(loadResultKey(config)).rejects.toThrow(`${resultKeyFile(config)}: the result key file is readable by other users (mode 644): run chmod 600 ${resultKeyFile(config)}, or set KERNELSEEK_RESULT_KEY`);
  });
});
