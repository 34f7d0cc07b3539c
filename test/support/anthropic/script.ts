import type { RecordedRequest, Reply, ReplyBlock } from './server.js';

/** Small builders for scripted conversations. */
export const text = (t: string): ReplyBlock => ({ type: 'text', text: t });
export const toolUse = (name: string, input: Record<string, unknown>, id?: string): ReplyBlock => ({ type: 'tool_use', name, input, ...(id ? { id } : {}) });
export const reply = (...content: ReplyBlock[]): Reply => ({ content });
export const endTurn = (t: string): Reply => ({ content: [{ type: 'text', text: t }], stopReason: 'end_turn' });

export const rateLimited = (retryAfter = 1): Reply => ({
  error: { status: 429, type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' },
  retryAfter,
});
export const overloaded = (): Reply => ({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } });
export const spendLimit = (): Reply => ({
  error: {
    status: 429,
    type: 'rate_limit_error',
    message: 'Your organization has reached its monthly spend limit.',
    errorCode: 'enforced_spend_limit_reached',
  },
  retryAfter: 1,
});

/** The 400 Anthropic sends when the account has no credit left (not a malformed request). */
export const creditBalance = (): Reply => ({
  error: { status: 400, type: 'invalid_request_error', message: 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.' },
});
/** A 429 that is a used-up quota, not a per-minute rate limit: retrying cannot help. */
export const quotaExhausted = (): Reply => ({
  error: { status: 429, type: 'rate_limit_error', message: 'You have reached your specified API usage limits. You will regain access on 2026-12-31 at 00:00 UTC.' },
  retryAfter: 1,
});

type Block = { type: string; text?: string; tool_use_id?: string; content?: unknown; is_error?: boolean };

/** The blocks of the request's last user message. */
export function lastUserBlocks(request: RecordedRequest): Block[] {
  const last = [...request.body.messages].reverse().find((m) => m.role === 'user');
  if (!last) return [];
  return typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : (last.content as Block[]);
}

/** The text of every tool_result in the request's last user message, in order. */
export function toolResultTexts(request: RecordedRequest): string[] {
  return lastUserBlocks(request)
    .filter((b) => b.type === 'tool_result')
    .map((b) => (typeof b.content === 'string' ? b.content : ((b.content as Block[] | undefined) ?? []).map((c) => c.text ?? '').join('\n')));
}

/** The plain text blocks (questions, notes) of the request's last user message. */
export function userTexts(request: RecordedRequest): string[] {
  return lastUserBlocks(request)
    .filter((b) => b.type === 'text')
    .map((b) => b.text ?? '');
}
