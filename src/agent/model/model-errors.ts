import { APIConnectionError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { AppError, NonRetryableError } from '../../core/errors.js';
import { StreamStalledError } from './stream-idle.js';

/** What the engine does about a failed model call. */
export type ModelFailure =
  | { kind: 'retry'; retryAfterMs: number | null; reason: string }
  /** No connection could be made: retried a few times at most, then the run ends with `error`. */
  | { kind: 'unreachable'; error: ModelUnreachableError }
  /** The response stopped sending (stream-idle.ts): retried a few times at most, then the run ends with `model_stalled`. */
  | { kind: 'stalled'; error: StreamStalledError }
  | { kind: 'context_overflow'; reason: string }
  | { kind: 'aborted' }
  | { kind: 'fatal'; error: AppError };

const SPEND_LIMIT_CODES = new Set([
  'enforced_spend_limit_reached',
  'contract_spend_limit_reached',
  'linked_organization_spend_limit_reached',
  'organization_on_hold',
]);

/** Why a connection could not be made, in words, from the fetch error's cause chain. */
export function connectionCause(error: unknown): string {
  let cause: unknown = error;
  for (let depth = 0; depth < 5 && cause; depth++) {
    const c = cause as { code?: string; message?: string; hostname?: string; cause?: unknown };
    const code = c.code ?? '';
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the host name does not resolve (DNS ${code}${c.hostname ? ` for ${c.hostname}` : ''})`;
    if (code === 'ECONNREFUSED') return 'the connection was refused (ECONNREFUSED: nothing listens there)';
    if (code === 'ECONNRESET') return 'the connection was reset (ECONNRESET)';
    if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return `the connection timed out (${code})`;
    if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `the network cannot reach the host (${code})`;
    if (/CERT|TLS|SSL|EPROTO/i.test(code) || /certificate|tls|ssl|wrong version number/i.test(c.message ?? '')) {
      return `the TLS handshake failed (${code || 'TLS'}: ${c.message ?? 'no detail'})`;
    }
    cause = c.cause;
  }
  const last = error as { message?: string; cause?: { message?: string } };
  return last.cause?.message ?? last.message ?? String(error);
}

/** The model API could not be reached at all (DNS, refused, TLS, timeout): the deployment's to fix. */
export class ModelUnreachableError extends NonRetryableError {
  readonly url: string;
  readonly reason: string;
  constructor(url: string, cause: unknown) {
    const reason = connectionCause(cause);
    super('model_unreachable', `Cannot reach the model API at ${url}: ${reason}`, {
      cause,
      userMessage: `Cannot reach the model API at ${url}: ${reason}. Check ANTHROPIC_BASE_URL and the network, then continue the run.`,
    });
    this.url = url;
    this.reason = reason;
  }
}

const CREDIT_BALANCE = /credit balance/i;
const QUOTA = /quota|usage limit|regain access/i;

function retryAfterMs(headers: Headers | undefined): number | null {
  if (!headers) return null;
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get('retry-after');
  if (!raw) return null;
  const seconds = Number.parseFloat(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : null;
}

/** Which account limit refused the request, if any: retrying only burns time, the run must stop. */
export function accountLimitOf(error: APIError): 'spend_limit' | 'credit_balance' | 'quota' | null {
  const text = `${error.apiMessage ?? error.message}`;
  // A credit balance that is too low comes back as a 400 invalid_request_error: not our bug.
  if (CREDIT_BALANCE.test(text)) return 'credit_balance';
  if (error.errorCode && SPEND_LIMIT_CODES.has(error.errorCode)) return 'spend_limit';
  if (error.type === 'billing_error' || error.status === 402) return 'spend_limit';
  if (error.status === 429 && /spend limit|spending limit|billing/i.test(text)) return 'spend_limit';
  if (error.status === 429 && QUOTA.test(text)) return 'quota';
  return null;
}

/** True for a spend-limit, credit or quota refusal. */
export function isSpendLimit(error: APIError): boolean {
  return accountLimitOf(error) !== null;
}

const LIMIT_WORDS = {
  spend_limit: ['model_spend_limit', 'a spend or billing limit was reached', 'raise the limit or wait for it to reset'],
  credit_balance: ['model_credit_balance', 'the credit balance is too low', 'add credits (Plans & Billing)'],
  quota: ['model_quota', 'the usage quota is used up', 'raise the quota or wait until it resets'],
} as const;

/** The end reason a run gets for a final model error (its code without the `model_` prefix for limits). */
export function endReasonOf(code: string): string {
  if (code === 'model_spend_limit') return 'spend_limit';
  if (code === 'model_credit_balance') return 'credit_balance';
  if (code === 'model_quota') return 'quota';
  return code;
}

/**
 * Sorts a model-call failure into retry / compact / stop. Errors say who is at fault: a spend limit
 * or a bad key is the deployment's (NonRetryableError with a message for people), a rejected
 * request shape is ours.
 */
export function classifyModelError(error: unknown): ModelFailure {
  if (error instanceof APIUserAbortError) return { kind: 'aborted' };
  if (error instanceof ModelUnreachableError) return { kind: 'unreachable', error };
  if (error instanceof StreamStalledError) return { kind: 'stalled', error };
  if (error instanceof APIConnectionError) return { kind: 'retry', retryAfterMs: null, reason: `connection failed: ${connectionCause(error)}` };
  if (error instanceof APIError) {
    const status = error.status;
    const message = error.apiMessage ?? error.message;
    const limit = accountLimitOf(error);
    if (limit) {
      const [code, what, fix] = LIMIT_WORDS[limit];
      return {
        kind: 'fatal',
        error: new NonRetryableError(code, `Anthropic API refused the request: ${message}`, {
          cause: error,
          userMessage: `The Anthropic API refused the request because ${what} (${message}). The run stopped; ${fix}, then continue the run.`,
        }),
      };
    }
    if (status === 401 || status === 403 || error.type === 'authentication_error' || error.type === 'permission_error') {
      return {
        kind: 'fatal',
        error: new NonRetryableError('model_auth', `Anthropic API rejected the credentials: ${message}`, {
          cause: error,
          userMessage: `The Anthropic API rejected the credentials (${message}). Check ANTHROPIC_API_KEY.`,
        }),
      };
    }
    if (status === 400 || status === 413 || error.type === 'invalid_request_error') {
      if (/prompt is too long|context window|too many tokens|maximum context/i.test(message)) {
        return { kind: 'context_overflow', reason: message };
      }
      return {
        kind: 'fatal',
        error: new NonRetryableError('model_request_invalid', `Anthropic API rejected the request: ${message}`, {
          cause: error,
          userMessage: `The Anthropic API rejected the request (${message}). This is a KernelSeek bug; the run's trace has the details.`,
        }),
      };
    }
    if (status === 404 || error.type === 'not_found_error') {
      return {
        kind: 'fatal',
        error: new NonRetryableError('model_not_found', `Anthropic API: ${message}`, {
          cause: error,
          userMessage: `The Anthropic API does not know this model or endpoint (${message}). Check the model id.`,
        }),
      };
    }
    // 429 rate limits, 529 overloaded, 408/409, 5xx, and errors sent mid-stream (no status).
    const retriable =
      status === undefined || status === 408 || status === 409 || status === 429 || status >= 500 || error.type === 'overloaded_error' || error.type === 'rate_limit_error' || error.type === 'api_error';
    if (retriable) return { kind: 'retry', retryAfterMs: retryAfterMs(error.headers), reason: `${status ?? 'stream'} ${error.type ?? ''} ${message}`.trim() };
    return {
      kind: 'fatal',
      error: new NonRetryableError('model_error', `Anthropic API error ${status}: ${message}`, { cause: error, userMessage: `The Anthropic API failed (${status}: ${message}).` }),
    };
  }
  if (error instanceof AppError) return { kind: 'fatal', error };
  if (error instanceof Error && (error.name === 'AbortError' || /aborted/i.test(error.message))) return { kind: 'aborted' };
  return { kind: 'retry', retryAfterMs: null, reason: error instanceof Error ? error.message : String(error) };
}
