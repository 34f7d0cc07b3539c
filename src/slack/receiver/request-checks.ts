import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * The checks a request to /slack/events passes before anything acts on it. Everything that can be
 * judged from the headers alone is judged before a byte of the body is read, so a forged or
 * oversized request costs no memory.
 */

/**
 * The largest body accepted, in bytes. Slack's largest payloads are a modal's view_submission (up
 * to 100 blocks of 3,000 characters plus every input's state, ~0.6 MB of JSON) and a block_actions
 * click carrying the 50 blocks of the message it is on (~0.2 MB); form-encoding can triple
 * non-ASCII text. 2 MiB is above all of them with room; anything larger is not from Slack.
 */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** Bytes held at once by bodies still being read, over all requests: many parallel uploads cannot add up either. */
export const MAX_PENDING_BODY_BYTES = 16 * 1024 * 1024;

/** Slack's window: a request more than five minutes away from our clock, either way, is refused. */
export const MAX_CLOCK_SKEW_SECONDS = 5 * 60;

/** An unsigned form post this small may be Slack's `ssl_check=1` probe (Bolt answers those unsigned too). */
export const SSL_CHECK_MAX_BYTES = 1024;

export type HeaderVerdict =
  | { ok: true; timestamp: number; signature: string }
  | { ok: false; status: 401 | 413; reason: string; sslCheckCandidate?: boolean };

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** The declared length, when the client declared one (chunked uploads are counted while read). */
export function declaredLength(headers: IncomingHttpHeaders): number | undefined {
  const raw = single(headers, 'content-length');
  if (raw === undefined || !/^\d{1,15}$/.test(raw)) return undefined;
  return Number(raw);
}

/** Judges a request by its headers: signature form, timestamp window, then declared size. */
export function checkHeaders(headers: IncomingHttpHeaders, nowSeconds: number, limit = MAX_BODY_BYTES): HeaderVerdict {
  const length = declaredLength(headers);
  const signature = single(headers, 'x-slack-signature');
  const stamp = single(headers, 'x-slack-request-timestamp');
  if (signature === undefined || stamp === undefined) {
    const form = (single(headers, 'content-type') ?? '').startsWith('application/x-www-form-urlencoded');
    const small = length !== undefined && length <= SSL_CHECK_MAX_BYTES;
    return { ok: false, status: 401, reason: 'missing X-Slack-Signature or X-Slack-Request-Timestamp', sslCheckCandidate: form && small };
  }
  if (!/^v0=[0-9a-f]{64}$/.test(signature)) return { ok: false, status: 401, reason: 'malformed X-Slack-Signature (expected v0= and 64 hex digits)' };
  if (!/^\d{1,12}$/.test(stamp)) return { ok: false, status: 401, reason: 'malformed X-Slack-Request-Timestamp (expected Unix seconds)' };
  const timestamp = Number(stamp);
  const skew = timestamp - nowSeconds;
  if (Math.abs(skew) > MAX_CLOCK_SKEW_SECONDS) {
    return { ok: false, status: 401, reason: `request timestamp is ${Math.abs(skew)} s ${skew > 0 ? 'ahead of' : 'behind'} this server's clock (at most ${MAX_CLOCK_SKEW_SECONDS} s)` };
  }
  if (length !== undefined && length > limit) return { ok: false, status: 413, reason: `body of ${length} bytes is over the ${limit}-byte limit` };
  return { ok: true, timestamp, signature };
}

/** Slack's v0 signature over the raw body, compared in constant time. */
export function isValidSignature(secret: string, timestamp: number, body: Buffer, signature: string): boolean {
  const hmac = createHmac('sha256', secret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(body);
  const expected = Buffer.from(`v0=${hmac.digest('hex')}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
