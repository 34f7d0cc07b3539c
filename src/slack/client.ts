import { webApi } from '@slack/bolt';

/**
 * The Web API client the poster uses. Rate limits and retries are the poster's job (it paces per
 * channel and per method and coalesces edits), so the SDK is told to hand a 429 straight back
 * instead of sleeping inside the call, and not to retry on its own.
 */
export function createSlackWebClient(options: { token: string; apiUrl?: string | undefined; timeoutMs?: number }): webApi.WebClient {
  return new webApi.WebClient(options.token, {
    ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
    timeout: options.timeoutMs ?? 30_000,
    logLevel: webApi.LogLevel.ERROR,
  });
}
