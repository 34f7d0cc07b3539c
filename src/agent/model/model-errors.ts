import { APIConnectionError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { AppError, NonRetryableError } from '../../core/errors.js';

/** What the engine does about a failed model call. */
export type ModelFailure =
  | { kind: 'retry'; retryAfterMs: number | null; reason: string }
  | { kind: 'context_overflow'; reason: string }
  | { kind: 'aborted' }
  | { kind: 'fatal'; error: AppError };

const SPEND_LIMIT_CODES = new Set([
  'enforced_spend_limit_reached',
  'contract_spend_limit_reached',
  'linked_organization_spend_limit_reached',
  'organization_on_hold',
]);

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

/** True for a spend-limit or billing refusal: retrying only burns time, the run must stop. */
export function isSpendLimit(error: APIError): boolean {
  if (error.errorCode && SPEND_LIMIT_CODES.has(error.errorCode)) return true;
  if (error.type === 'billing_error' || error.status === 402) return true;
  const text = `${error.apiMessage ?? error.message}`.toLowerCase();
  return error.status === 429 && /spend limit|spending limit|usage limit|credit balance|billing/.test(text);
}

/**
 * Sorts a model-call failure into retry / compact / stop. Errors say who is at fault: a spend limit
 * or a bad key is the deployment's (NonRetryableError with a message for people), a rejected
 * request shape is ours.
 */
export function classifyModelError(error: unknown): ModelFailure {
  if (error instanceof APIUserAbortError) return { kind: 'aborted' };
  if (error instanceof APIConnectionError) return { kind: 'retry', retryAfterMs: null, reason: `connection failed: ${error.message}` };
  if (error instanceof APIError) {
    const status = error.status;
    const message = error.apiMessage ?? error.message;
    if (isSpendLimit(error)) {
      return {
        kind: 'fatal',
        error: new NonRetryableError('model_spend_limit', `Anthropic API refused the request: ${message}`, {
          cause: error,
          userMessage: `The Anthropic API refused the request because a spend or billing limit was reached (${message}). The run stopped; raise the limit or wait for it to reset, then start a new run.`,
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
