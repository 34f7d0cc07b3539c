import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkHeaders, isValidSignature, MAX_BODY_BYTES, MAX_CLOCK_SKEW_SECONDS } from '../../src/slack/receiver/request-checks.js';
import { replayKey } from '../../src/slack/receiver/replay-guard.js';

// The header checks the receiver makes before reading a body, at their edges.
const NOW = 1_800_000_000;
const SIG = `v0=${'ab'.repeat(32)}`;
const headers = (extra: Record<string, string> = {}) => ({ 'x-slack-signature': SIG, 'x-slack-request-timestamp': String(NOW), ...extra });

describe('checkHeaders', () => {
  it('accepts the edges of the window and refuses one second past them, both ways', () => {
    for (const skew of [-MAX_CLOCK_SKEW_SECONDS, 0, MAX_CLOCK_SKEW_SECONDS]) {
      expect(checkHeaders(headers({ 'x-slack-request-timestamp': String(NOW + skew) }), NOW).ok, String(skew)).toBe(true);
    }
    const ahead = checkHeaders(headers({ 'x-slack-request-timestamp': String(NOW + MAX_CLOCK_SKEW_SECONDS + 1) }), NOW);
    const behind = checkHeaders(headers({ 'x-slack-request-timestamp': String(NOW - MAX_CLOCK_SKEW_SECONDS - 1) }), NOW);
    expect(ahead).toMatchObject({ ok: false, status: 401, reason: expect.stringMatching(/301 s ahead/) });
    expect(behind).toMatchObject({ ok: false, status: 401, reason: expect.stringMatching(/301 s behind/) });
  });

  it('refuses malformed signatures and timestamps', () => {
    for (const bad of ['v0=', `v0=${'a'.repeat(63)}`, `v0=${'A'.repeat(64)}`, `v1=${'a'.repeat(64)}`, `${SIG}, ${SIG}`]) {
      expect(checkHeaders(headers({ 'x-slack-signature': bad }), NOW), bad).toMatchObject({ ok: false, status: 401 });
    }
    for (const bad of ['', '1.5', '-3', '1e9', ' 1800000000', '9'.repeat(13)]) {
      expect(checkHeaders(headers({ 'x-slack-request-timestamp': bad }), NOW), bad).toMatchObject({ ok: false, status: 401 });
    }
  });

  it('judges the declared size after the signature headers: 413 for a signed oversize body, 401 for an unsigned one', () => {
    expect(checkHeaders(headers({ 'content-length': String(MAX_BODY_BYTES + 1) }), NOW)).toMatchObject({ ok: false, status: 413 });
    expect(checkHeaders(headers({ 'content-length': String(MAX_BODY_BYTES) }), NOW).ok).toBe(true);
    expect(checkHeaders({ 'content-length': String(50 * 1024 * 1024) }, NOW)).toMatchObject({ ok: false, status: 401, sslCheckCandidate: false });
  });

  it('lets only a small unsigned form post be read as a possible ssl_check', () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect(checkHeaders({ ...form, 'content-length': '20' }, NOW)).toMatchObject({ sslCheckCandidate: true });
    expect(checkHeaders({ ...form, 'content-length': '5000' }, NOW)).toMatchObject({ sslCheckCandidate: false });
    expect(checkHeaders(form, NOW)).toMatchObject({ sslCheckCandidate: false });
    expect(checkHeaders({ 'content-type': 'application/json', 'content-length': '20' }, NOW)).toMatchObject({ sslCheckCandidate: false });
  });
});

describe('isValidSignature and the replay key', () => {
  const secret = 'shh-signing-secret';
  const body = Buffer.from('{"type":"event_callback"}');
  const sign = (ts: number, b: Buffer) => `v0=${createHmac('sha256', secret).update(`v0:${ts}:`).update(b).digest('hex')}`;

  it('accepts Slack’s signature and refuses any change to the body, the timestamp or the secret', () => {
    const sig = sign(NOW, body);
    expect(isValidSignature(secret, NOW, body, sig)).toBe(true);
    expect(isValidSignature(secret, NOW + 1, body, sig)).toBe(false);
    expect(isValidSignature(secret, NOW, Buffer.from('{"type":"event_callback" }'), sig)).toBe(false);
    expect(isValidSignature('another-secret', NOW, body, sig)).toBe(false);
    expect(isValidSignature(secret, NOW, body, sig.slice(0, -1))).toBe(false);
  });

  it('keys a request by what Slack signed: the same request, the same key; a fresh signature, another', () => {
    expect(replayKey(NOW, sign(NOW, body))).toBe(replayKey(NOW, sign(NOW, body)));
    expect(replayKey(NOW + 1, sign(NOW + 1, body))).not.toBe(replayKey(NOW, sign(NOW, body)));
  });
});
