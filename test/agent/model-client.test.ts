import { afterEach, describe, expect, it } from 'vitest';
import { NonRetryableError } from '../../src/core/errors.js';
import { createAnthropicModelClient } from '../../src/agent/model/anthropic-client.js';
import { callModelWithRetry, ContextOverflowError, DEFAULT_RETRY_POLICY, retryDelayMs } from '../../src/agent/model/model-retry.js';
import type { ModelRequest } from '../../src/agent/model/types.js';
import { startFakeAnthropic, type FakeAnthropic } from '../support/anthropic/server.js';
import { overloaded, rateLimited, reply, spendLimit, text, toolUse } from '../support/anthropic/script.js';

const request: ModelRequest = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1000,
  system: [{ type: 'text', text: 'You are a test.', cache_control: { type: 'ephemeral' } }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
};

let server: FakeAnthropic | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function client(url: string) {
  return createAnthropicModelClient({ apiKey: 'sk-ant-test-key-000', baseUrl: url, model: 'claude-sonnet-4-5' });
}

const fastPolicy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 10, maxDelayMs: 50 };

describe('model client through the real SDK against the fake Messages API', () => {
  it('streams a response with text and a tool call, and sends streaming requests', async () => {
    server = await startFakeAnthropic({ script: [reply(text('Let me look.'), toolUse('bash', { command: 'ls -la' }, 'toolu_1'))] });
    const { message, attempts } = await callModelWithRetry(client(server.url), request, { policy: fastPolicy });
    expect(attempts).toBe(1);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      expect.objectContaining({ type: 'text', text: 'Let me look.' }),
      expect.objectContaining({ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls -la' } }),
    ]);
    expect(server.requests[0]!.body.stream).toBe(true);
    const headers = server.requests[0]!.headers;
    expect(String(headers['x-api-key'] ?? headers.authorization)).toContain('sk-ant-test-key-000');
    expect(message.usage.input_tokens).toBeGreaterThan(0);
  });

  it('retries a 429 after the retry-after the server sent, then succeeds', async () => {
    server = await startFakeAnthropic({ script: [rateLimited(1), reply(text('ok'))] });
    const retries: number[] = [];
    const started = Date.now();
    const { message, attempts } = await callModelWithRetry(client(server.url), request, { policy: fastPolicy, onRetry: (n) => retries.push(n.delayMs) });
    expect(message.content[0]).toMatchObject({ text: 'ok' });
    expect(attempts).toBe(2);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toBeGreaterThanOrEqual(1000);
    expect(retries[0]).toBeLessThanOrEqual(1200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(server.requests).toHaveLength(2);
  });

  it('retries 529 overloaded responses and an overloaded error in the middle of a stream', async () => {
    server = await startFakeAnthropic({
      script: [overloaded(), { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' }, midStream: true }, reply(text('finally'))],
    });
    const { message, attempts } = await callModelWithRetry(client(server.url), request, { policy: fastPolicy });
    expect(attempts).toBe(3);
    expect(message.content[0]).toMatchObject({ text: 'finally' });
  });

  it('never retries a spend-limit 429 and says what happened', async () => {
    server = await startFakeAnthropic({ script: [spendLimit(), reply(text('never sent'))] });
    const error = await callModelWithRetry(client(server.url), request, { policy: fastPolicy }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonRetryableError);
    expect((error as NonRetryableError).code).toBe('model_spend_limit');
    expect((error as NonRetryableError).userMessage).toMatch(/spend or billing limit/);
    expect(server.requests).toHaveLength(1);
  });

  it('gives up after the configured attempts with a clear message', async () => {
    server = await startFakeAnthropic({ script: [overloaded(), overloaded(), overloaded()] });
    const error = await callModelWithRetry(client(server.url), request, { policy: { ...fastPolicy, attempts: 3 } }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/failed 3 times/);
    expect(server.requests).toHaveLength(3);
  });

  it('reports a request that no longer fits the context window', async () => {
    server = await startFakeAnthropic({ script: [{ error: { status: 400, type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } }] });
    await expect(callModelWithRetry(client(server.url), request, { policy: fastPolicy })).rejects.toBeInstanceOf(ContextOverflowError);
  });

  it('hands back the unfinished tool input of a max_tokens cut-off', async () => {
    server = await startFakeAnthropic({ script: [{ content: [toolUse('str_replace_based_edit_tool', { command: 'create', path: 'a.cu', file_text: 'x'.repeat(400) })], stopReason: 'max_tokens' }] });
    const { message } = await callModelWithRetry(client(server.url), request, { policy: fastPolicy });
    expect(message.stop_reason).toBe('max_tokens');
    const input = (message.content[0] as { input: { file_text?: string } }).input;
    expect((input.file_text ?? '').length).toBeLessThan(400);
  });
});

describe('retry delays', () => {
  it('honours retry-after with at most 20% jitter, and backs off exponentially without it', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, random: () => 1 };
    expect(retryDelayMs(policy, 1, 2000)).toBe(2400);
    expect(retryDelayMs({ ...policy, random: () => 0 }, 1, 2000)).toBe(2000);
    expect(retryDelayMs({ ...policy, random: () => 0.5 }, 1, null)).toBe(1000);
    expect(retryDelayMs({ ...policy, random: () => 0.5 }, 3, null)).toBe(4000);
    expect(retryDelayMs({ ...policy, random: () => 0.5 }, 20, null)).toBe(60_000);
  });
});
