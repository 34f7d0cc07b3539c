import Anthropic, { APIConnectionError } from '@anthropic-ai/sdk';
import type { AnthropicConfig } from '../../config/index.js';
import { ConfigError } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { ModelUnreachableError } from './model-errors.js';
import { StreamStalledError, watchedFetch, watchIdle } from './stream-idle.js';
import type { ModelClient } from './types.js';

const ANTHROPIC_API = 'https://api.anthropic.com';
/** KERNELSEEK_MODEL_IDLE_TIMEOUT's default, for clients built without the agent's config. */
const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

/**
 * The Messages API client. Streaming, so long outputs never hit the non-streaming time limit; the
 * SDK's own retries are off (`maxRetries: 0`) because model-retry.ts retries with rules the SDK
 * does not have (a spend-limit 429 is final, retry-after plus jitter, the run's abort signal).
 */
export function createAnthropicModelClient(config: AnthropicConfig, options: { timeoutMs?: number; idleTimeoutMs?: number; logger?: Logger } = {}): ModelClient {
  const log = options.logger ?? silentLogger;
  const baseURL = config.baseUrl ?? ANTHROPIC_API;
  if (!config.apiKey && baseURL.replace(/\/+$/, '') === ANTHROPIC_API) {
    throw new ConfigError(['ANTHROPIC_API_KEY: must be set to run the agent against the Anthropic API (or set ANTHROPIC_BASE_URL to another server that speaks the Messages API)']);
  }
  const client = new Anthropic({
    // A server other than Anthropic's may need no key; the SDK still wants a credential, and the
    // placeholder reveals nothing.
    apiKey: config.apiKey ?? 'no-key-configured',
    baseURL,
    maxRetries: 0,
    timeout: options.timeoutMs ?? 10 * 60 * 1000,
    // The SDK's notices (e.g. a deprecated model) go to our structured log, not to stdout.
    logger: {
      error: (msg, ...rest) => log.error({ sdk: rest }, String(msg)),
      warn: (msg, ...rest) => log.warn({ sdk: rest }, String(msg)),
      info: (msg, ...rest) => log.info({ sdk: rest }, String(msg)),
      debug: (msg, ...rest) => log.debug({ sdk: rest }, String(msg)),
    },
  });
  const endpoint = `${baseURL.replace(/\/+$/, '')}/v1/messages`;
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  return {
    async createMessage(request, { signal }) {
      const idle = watchIdle(idleTimeoutMs);
      const watched = client.withOptions({ fetch: watchedFetch(globalThis.fetch.bind(globalThis), idle) });
      let stream: ReturnType<typeof client.messages.stream> | undefined;
      try {
        stream = watched.messages.stream(request, { signal: signal ? AbortSignal.any([signal, idle.signal]) : idle.signal });
        return await stream.finalMessage();
      } catch (error) {
        // The run's own stop wins over a stall that happened at the same moment.
        if (idle.fired() && !signal?.aborted) throw new StreamStalledError(idleTimeoutMs, stream?.currentMessage?.usage);
        // No connection at all: name the URL and the cause, so one line says what to fix.
        if (error instanceof APIConnectionError) throw new ModelUnreachableError(endpoint, error);
        throw error;
      } finally {
        idle.stop();
      }
    },
  };
}
