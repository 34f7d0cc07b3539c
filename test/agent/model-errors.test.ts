import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicModelClient } from '../../src/agent/model/anthropic-client.js';
import { ModelUnreachableError } from '../../src/agent/model/model-errors.js';
import { callModelWithRetry, DEFAULT_RETRY_POLICY } from '../../src/agent/model/model-retry.js';
import type { ModelRequest } from '../../src/agent/model/types.js';
import { NonRetryableError } from '../../src/core/errors.js';
import { startFakeAnthropic, type FakeAnthropic } from '../support/anthropic/server.js';
import { creditBalance, endTurn, quotaExhausted, rateLimited, reply, text } from '../support/anthropic/script.js';
import { closedPort } from '../support/net.js';

// Model failures a person must fix are named in one sentence, fast, and never retried for minutes.
const request: ModelRequest = { model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
const fastPolicy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 10, maxDelayMs: 50 };

let server: FakeAnthropic | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const client = (url: string) => createAnthropicModelClient({ apiKey: 'sk-ant-test-key-000', baseUrl: url, model: 'claude-sonnet-4-6' });

async function failure(url: string, policy = fastPolicy) {
  const started = Date.now();
  const error = await callModelWithRetry(client(url), request, { policy }).catch((e: unknown) => e);
  return { error: error as Error, ms: Date.now() - started };
}

describe('a model API that cannot be reached', () => {
  it('a refused connection: a few attempts, then one sentence naming the URL and the cause', async () => {
    const port = await closedPort();
    const retries: string[] = [];
    const started = Date.now();
    const error = await callModelWithRetry(client(`http://127.0.0.1:${port}`), request, { policy: DEFAULT_RETRY_POLICY, onRetry: (n) => retries.push(n.reason) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelUnreachableError);
    expect(error).toBeInstanceOf(NonRetryableError);
    const message = (error as ModelUnreachableError).userMessage;
    expect(message).toContain(`http://127.0.0.1:${port}/v1/messages`);
    expect(message).toMatch(/connection was refused \(ECONNREFUSED/);
    expect(message.split('\n')).toHaveLength(1);
    // Three attempts in all (two retries), well inside 20 s with the default backoff.
    expect(retries).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('a name that does not resolve (DNS) and a TLS handshake that fails are named as such', async () => {
    const dns = await failure('http://api.kernelseek.invalid');
    expect(dns.error).toBeInstanceOf(ModelUnreachableError);
    expect((dns.error as ModelUnreachableError).userMessage).toMatch(/^Cannot reach the model API at http:\/\/api\.kernelseek\.invalid\/v1\/messages: the host name does not resolve \(DNS E(NOTFOUND|AI_AGAIN)/);

    server = await startFakeAnthropic({ script: [reply(text('never'))] });
    const tls = await failure(server.url.replace('http://', 'https://'));
    expect(tls.error).toBeInstanceOf(ModelUnreachableError);
    expect((tls.error as ModelUnreachableError).userMessage).toMatch(/the TLS handshake failed/);
  });
});

describe('account limits', () => {
  it('a credit balance that is too low is named, not called a KernelSeek bug, and not retried', async () => {
    server = await startFakeAnthropic({ script: [creditBalance(), reply(text('never sent'))] });
    const { error } = await failure(server.url);
    expect((error as NonRetryableError).code).toBe('model_credit_balance');
    expect((error as NonRetryableError).userMessage).toMatch(/credit balance is too low/);
    expect((error as NonRetryableError).userMessage).not.toMatch(/KernelSeek bug/);
    expect(server.requests).toHaveLength(1);
  });

  it('a quota 429 is named as a quota and not retried; an ordinary rate limit still is', async () => {
    server = await startFakeAnthropic({ script: [quotaExhausted(), reply(text('never sent'))] });
    const { error } = await failure(server.url);
    expect((error as NonRetryableError).code).toBe('model_quota');
    expect((error as NonRetryableError).userMessage).toMatch(/usage quota is used up/);
    expect(server.requests).toHaveLength(1);
    await server.close();

    server = await startFakeAnthropic({ script: [rateLimited(0), endTurn('ok')] });
    const ok = await callModelWithRetry(client(server.url), request, { policy: fastPolicy });
    expect(ok.attempts).toBe(2);
  });
});
