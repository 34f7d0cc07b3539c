import { setTimeout as delay } from 'node:timers/promises';
import { AppError, NonRetryableError } from '../../core/errors.js';
import { classifyModelError } from './model-errors.js';
import { formatSeconds } from './stream-idle.js';
import type { Message, ModelClient, ModelRequest, Usage } from './types.js';

/** The context window is full: the caller compacts and calls again. */
export class ContextOverflowError extends AppError {
  constructor(reason: string) {
    super('model_context_overflow', `The request no longer fits the model's context window: ${reason}`);
  }
}

/** The run was stopped while a model call was in flight. */
export class StepAbortedError extends AppError {
  constructor() {
    super('step_aborted', 'The model call was aborted because the run stopped.');
  }
}

export interface RetryPolicy {
  /** Attempts in all (first call included). */
  attempts: number;
  /** Backoff without retry-after: base * 2^n, capped, each with jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { attempts: 6, baseDelayMs: 1000, maxDelayMs: 60_000 };

/**
 * Attempts when no connection can be made at all (DNS, refused, TLS): a blip passes within seconds,
 * anything longer is a deployment problem a person must fix, so the run says so in one line (about
 * 3 s with the default backoff) instead of retrying for minutes.
 */
export const CONNECT_ATTEMPTS = 3;

/**
 * Attempts when the response stream stalls (no data for KERNELSEEK_MODEL_IDLE_TIMEOUT): one stall is
 * a blip, three in a row end the run with `model_stalled` rather than hold it for the full retry budget.
 */
export const STALL_ATTEMPTS = 3;

export interface RetryNotice {
  attempt: number;
  delayMs: number;
  reason: string;
  /** Usage a failed attempt had reported before it was abandoned (a stalled stream): billed all the same. */
  usage?: Usage;
}

/** Waits `ms`; a stop of the run ends the wait as the step's own abort, not as a timer's AbortError. */
async function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, signal ? { signal } : {});
  } catch {
    throw new StepAbortedError();
  }
}

/**
 * The delay before the next attempt. A server's retry-after is honoured (it knows when capacity
 * returns) with up to 20% added so many workers do not return in the same millisecond; without one,
 * exponential backoff with ±25% jitter.
 */
export function retryDelayMs(policy: RetryPolicy, attempt: number, retryAfterMs: number | null): number {
  const random = policy.random ?? Math.random;
  if (retryAfterMs !== null) return Math.round(retryAfterMs * (1 + 0.2 * random()));
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(exp * (0.75 + 0.5 * random()));
}

/**
 * Calls the model, retrying 429 (not spend limits), 529, 5xx and connection failures. Throws
 * ContextOverflowError for a request that is too long, StepAbortedError when the signal fires, and a
 * NonRetryableError (with a message for people) for anything retrying cannot fix.
 *
 * The loop is ours, not a retry library's (p-retry, which the turn scheduler uses) nor the SDK's own
 * (switched off in the client): the delay comes from each failure (the server's retry-after), a
 * connection failure has a smaller budget than an overload, and every retry is recorded in the
 * step (onRetry) — a retry library takes one backoff schedule for all failures.
 */
export async function callModelWithRetry(
  client: ModelClient,
  request: ModelRequest,
  options: { signal?: AbortSignal; policy?: RetryPolicy; onRetry?: (notice: RetryNotice) => void } = {},
): Promise<{ message: Message; attempts: number }> {
  const policy = options.policy ?? DEFAULT_RETRY_POLICY;
  const sleep = policy.sleep ?? abortableSleep;
  for (let attempt = 1; ; attempt++) {
    if (options.signal?.aborted) throw new StepAbortedError();
    try {
      const message = await client.createMessage(request, { signal: options.signal });
      return { message, attempts: attempt };
    } catch (error) {
      const failure = classifyModelError(error);
      if (failure.kind === 'aborted' || options.signal?.aborted) throw new StepAbortedError();
      if (failure.kind === 'context_overflow') throw new ContextOverflowError(failure.reason);
      if (failure.kind === 'fatal') throw failure.error;
      if (failure.kind === 'unreachable') {
        if (attempt >= Math.min(CONNECT_ATTEMPTS, policy.attempts)) throw failure.error;
      } else if (failure.kind === 'stalled') {
        if (attempt >= Math.min(STALL_ATTEMPTS, policy.attempts)) {
          const idle = formatSeconds(failure.error.idleMs);
          throw new NonRetryableError('model_stalled', `The model's response stream stalled ${attempt} times in a row (no data for ${idle} each)`, {
            cause: failure.error,
            userMessage: `The Anthropic API's response stopped arriving ${attempt} times in a row (no data for ${idle} each, KERNELSEEK_MODEL_IDLE_TIMEOUT), so the run stopped. Continue the run when the API answers again.`,
          });
        }
      } else if (attempt >= policy.attempts) {
        throw new AppError('model_unavailable', `The model call failed ${attempt} times; last: ${failure.reason}`, {
          cause: error,
          userMessage: `The Anthropic API kept failing (${attempt} attempts; last: ${failure.reason}).`,
        });
      }
      const reason = failure.kind === 'unreachable' || failure.kind === 'stalled' ? failure.error.message : failure.reason;
      const delayMs = retryDelayMs(policy, attempt, failure.kind === 'retry' ? failure.retryAfterMs : null);
      const usage = failure.kind === 'stalled' ? failure.error.usage : undefined;
      options.onRetry?.({ attempt, delayMs, reason, ...(usage ? { usage } : {}) });
      await sleep(delayMs, options.signal);
    }
  }
}
