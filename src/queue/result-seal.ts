import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { ResultKey } from './result-key.js';

/**
 * Results that come back through Redis are sealed by the GPU worker: an HMAC-SHA256, under the
 * result key (never in Redis), over the result and what it is the result of (the job kind, the job
 * id and a digest of the whole payload: task, candidate source, scenarios, options, run and
 * evaluation number). The dispatcher opens the seal against the payload it sent itself, not the
 * job's data in Redis, so a planted job, a returnvalue rewritten after completion, a forged
 * completion event and a genuine result of other work are all refused. docs/queue.md, "Results are
 * sealed", has the attacks and why this scheme and not a secret sent in the job.
 */

export const SEAL_VERSION = 1;

/** The kinds whose results reach a dispatcher through Redis. */
export type SealedKind = 'evaluate' | 'gpu-bash';

export interface ResultSeal {
  v: typeof SEAL_VERSION;
  /** The key's fingerprint (ResultKey.id), so a mismatch of configuration can be named. */
  key: string;
  kind: SealedKind;
  jobId: string;
  /** sha256 of the canonical JSON of the kind and the payload. */
  payload: string;
  sealedAt: string;
  mac: string;
}

export interface SealBinding {
  kind: SealedKind;
  jobId: string;
  payload: unknown;
}

export type Opened<T> = { ok: true; value: T; seal: ResultSeal } | { ok: false; reason: string; keyMismatch: boolean };

/** JSON with object keys sorted at every level; what JSON.stringify drops, this drops too. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      // fromEntries defines own properties, so a key named `__proto__` is kept, not swallowed.
      return Object.fromEntries(Object.keys(v).sort().map((k) => [k, (v as Record<string, unknown>)[k]]));
    }
    return v;
  });
}

export function payloadDigest(kind: SealedKind, payload: unknown): string {
  return createHash('sha256').update(canonicalJson({ kind, payload })).digest('hex');
}

function macOf(key: ResultKey, unsigned: Omit<ResultSeal, 'mac'>, result: unknown): string {
  return createHmac('sha256', key.secret).update(canonicalJson({ seal: unsigned, result })).digest('hex');
}

/**
 * The worker's side: the value as Redis will hold it (a JSON round trip), with its seal added.
 * The payload is the job's validated data as this worker received and ran it.
 */
export function sealResult<T extends object>(key: ResultKey, binding: SealBinding, value: T): T & { seal: ResultSeal } {
  const plain = JSON.parse(JSON.stringify(value)) as T & { seal?: unknown };
  delete plain.seal;
  const unsigned: Omit<ResultSeal, 'mac'> = {
    v: SEAL_VERSION,
    key: key.id,
    kind: binding.kind,
    jobId: binding.jobId,
    payload: payloadDigest(binding.kind, binding.payload),
    sealedAt: new Date().toISOString(),
  };
  return { ...plain, seal: { ...unsigned, mac: macOf(key, unsigned, plain) } };
}

function isSeal(value: unknown): value is ResultSeal {
  const s = value as Record<string, unknown> | null;
  return (
    !!s &&
    typeof s === 'object' &&
    s.v === SEAL_VERSION &&
    ['key', 'kind', 'jobId', 'payload', 'sealedAt', 'mac'].every((k) => typeof s[k] === 'string') &&
    /^[0-9a-f]{64}$/.test(s.mac as string)
  );
}

/**
 * The dispatcher's side: the value without its seal when the seal is genuine and binds this job's
 * kind, id and the payload the dispatcher sent; otherwise why not, in words for a log.
 */
export function openSeal<T>(key: ResultKey, expected: { kind: SealedKind; jobId: string; payloadDigest: string }, value: unknown): Opened<T> {
  const refuse = (reason: string, keyMismatch = false): Opened<T> => ({ ok: false, reason, keyMismatch });
  if (!value || typeof value !== 'object' || Array.isArray(value)) return refuse('it is not a sealed result (no object came back)');
  const { seal, ...rest } = value as Record<string, unknown>;
  if (seal === undefined) return refuse('it carries no seal: no KernelSeek worker produced it');
  if (!isSeal(seal)) return refuse('its seal is malformed');
  const { mac, ...unsigned } = seal;
  const good = Buffer.from(macOf(key, unsigned, rest), 'hex');
  if (!timingSafeEqual(good, Buffer.from(mac, 'hex'))) {
    if (seal.key !== key.id) {
      return refuse(`it is sealed with result key ${seal.key}, and this dispatcher holds key ${key.id} (${key.source}): a worker with another KERNELSEEK_RESULT_KEY, or a forgery`, true);
    }
    return refuse('its seal does not match its content: it was changed after a worker sealed it, or forged');
  }
  if (seal.kind !== expected.kind) return refuse(`it is the sealed result of a ${seal.kind} job, not of this ${expected.kind} job`);
  if (seal.jobId !== expected.jobId) return refuse(`it is the sealed result of job ${seal.jobId}, not of ${expected.jobId}`);
  if (seal.payload !== expected.payloadDigest) {
    return refuse('it is the sealed result of other work under this job id (another candidate source, task, scenarios, options, run or evaluation number)');
  }
  return { ok: true, value: rest as T, seal };
}
