import { webApi, type types } from '@slack/bolt';
import type { SlackConfig } from '../config/index.js';
import { AppError, ConfigError, NonRetryableError } from '../core/errors.js';
import { guardSlackPayload } from '../core/mrkdwn.js';

/**
 * Where a digest goes. The Slack app's rate-aware poster satisfies this once it lands; until then
 * createWebApiDigestPoster posts through @slack/web-api directly (the digest posts twice a day at most,
 * far below any rate limit).
 */
export interface DigestPoster {
  postMessage(channel: string, blocks: types.KnownBlock[], text: string): Promise<{ ts: string }>;
  uploadFile(channel: string, file: Buffer, name: string, options?: { title?: string; altText?: string; threadTs?: string }): Promise<void>;
}

/** Slack errors that no retry can fix: the deployment or the channel must change. */
const PERMANENT = new Set([
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'missing_scope',
  'restricted_action',
  'invalid_blocks',
  'msg_too_long',
]);

function hintFor(error: string, channel: string): string {
  switch (error) {
    case 'channel_not_found':
    case 'not_in_channel':
      return `The KernelSeek bot cannot post in ${channel}: check DIGEST_CHANNEL and invite the bot (/invite @KernelSeek).`;
    case 'is_archived':
      return `Channel ${channel} is archived: set DIGEST_CHANNEL to a live channel.`;
    case 'missing_scope':
      return 'The Slack app lacks a scope the digest needs (chat:write, files:write): reinstall it from the manifest.';
    case 'invalid_auth':
    case 'not_authed':
    case 'token_revoked':
    case 'account_inactive':
      return 'SLACK_BOT_TOKEN is not accepted by Slack: set a current bot token.';
    default:
      return `Slack refused the digest (${error}).`;
  }
}

/** Turns a Web API failure into an AppError that says whether a retry can help. */
export function classifySlackError(error: unknown, method: string, channel: string): AppError {
  const e = error as { code?: string; data?: { error?: string }; message?: string };
  const platform = e.code === webApi.ErrorCode.PlatformError ? e.data?.error : undefined;
  if (platform && PERMANENT.has(platform)) {
    return new NonRetryableError(`slack_${platform}`, `${method} in ${channel} failed: ${platform}`, { cause: error, userMessage: hintFor(platform, channel) });
  }
  return new AppError('slack_unavailable', `${method} in ${channel} failed: ${platform ?? e.message ?? String(error)}`, {
    cause: error,
    userMessage: `Slack did not accept the digest for ${channel} (${platform ?? 'no response'}); it will be tried again.`,
  });
}

/** A Web API client for the configured workspace (SLACK_API_URL lets tests and proxies stand in). */
export function createSlackWebClient(config: Pick<SlackConfig, 'botToken' | 'apiUrl'>, options: { retries?: number } = {}): webApi.WebClient {
  if (!config.botToken) throw new ConfigError(['SLACK_BOT_TOKEN: must be set to post the digest to Slack (a bot token starting with xoxb-)']);
  return new webApi.WebClient(config.botToken, {
    ...(config.apiUrl ? { slackApiUrl: config.apiUrl.endsWith('/') ? config.apiUrl : `${config.apiUrl}/` } : {}),
    logLevel: webApi.LogLevel.ERROR,
    // The queue retries a failed digest with backoff; a few quick retries here cover network blips.
    retryConfig: { retries: options.retries ?? 2, factor: 2, minTimeout: 500, maxTimeout: 5_000 },
  });
}

/** A DigestPoster over a Web API client: chat.postMessage, and files.uploadV2 for the chart. */
export function createWebApiDigestPoster(client: webApi.WebClient): DigestPoster {
  return {
    async postMessage(channel, blocks, text) {
      try {
        const res = await client.chat.postMessage({ channel, blocks: guardSlackPayload(blocks), text: guardSlackPayload(text), unfurl_links: false, unfurl_media: false });
        if (!res.ts) throw new Error('chat.postMessage returned no ts');
        return { ts: res.ts };
      } catch (error) {
        throw classifySlackError(error, 'chat.postMessage', channel);
      }
    },
    async uploadFile(channel, file, name, options = {}) {
      try {
        const common = {
          file,
          filename: name,
          ...(options.title ? { title: guardSlackPayload(options.title) } : {}),
          ...(options.altText ? { alt_text: options.altText } : {}),
        };
        await client.filesUploadV2(
          options.threadTs ? { ...common, channel_id: channel, thread_ts: options.threadTs } : { ...common, channel_id: channel },
        );
      } catch (error) {
        throw classifySlackError(error, 'files.uploadV2', channel);
      }
    },
  };
}
