import { webApi } from '@slack/bolt';
import type { Logger } from '../core/logger.js';
import type { Store } from '../db/index.js';
import { classifySlackError, postDigestNow, type DigestPoster, type DigestWindowName, type GoalOf } from '../digest/index.js';
import type { DigestPort } from './deps.js';
import type { PostResult, SlackPoster } from './poster/poster.js';

/** A poster failure as the Web API would have thrown it, so the digest's classification (retry or not, and the hint) applies. */
function failure(result: Extract<PostResult, { ok: false }>, method: string, channel: string): Error {
  const error = Object.assign(new Error(`${method} failed: ${result.error}`), { code: webApi.ErrorCode.PlatformError, data: { ok: false, error: result.error } });
  return classifySlackError(error, method, channel);
}

/**
 * The digest's `DigestPoster` over the process's one Slack poster, so the digest is paced and
 * retried with everything else the process sends (one poster per process).
 */
export function createDigestPoster(poster: SlackPoster): DigestPoster {
  return {
    async postMessage(channel, blocks, text) {
      const result = await poster.postMessage({ channel, text, blocks });
      if (!result.ok) throw failure(result, 'chat.postMessage', channel);
      if (!result.ts) throw new Error('chat.postMessage returned no ts');
      return { ts: result.ts };
    },
    async uploadFile(channel, file, name, options = {}) {
      const result = await poster.uploadFile({
        channel,
        content: file,
        filename: name,
        ...(options.title ? { title: options.title } : {}),
        ...(options.threadTs ? { threadTs: options.threadTs } : {}),
      });
      if (!result.ok) throw failure(result, 'files.uploadV2', channel);
    },
  };
}

/** `/kernelseek digest [day|week]`: the digest of the last day (DIGEST_WINDOW by default) or week, posted in the channel now (not the scheduled one). */
export function createDigestPort(deps: { store: Store; poster: SlackPoster; timeZone: string; logger: Logger; window?: DigestWindowName; goals?: () => Promise<GoalOf> }): DigestPort {
  const digestPoster = createDigestPoster(deps.poster);
  return {
    async postNow({ channel, window }) {
      const name = window ?? deps.window ?? 'day';
      const posted = await postDigestNow(
        { store: deps.store, poster: digestPoster, timeZone: deps.timeZone, logger: deps.logger, window: name, ...(deps.goals ? { goals: deps.goals } : {}) },
        { channel },
      );
      const chart = posted.chart === 'posted' ? ' with its chart' : posted.chart === 'none' ? ' (no chart: nothing counted in the window)' : ` (the chart failed: ${posted.chartError ?? 'unknown error'})`;
      return `:newspaper: Posted the digest of the last ${name === 'week' ? '7 days' : '24 hours'} in this channel${chart}.`;
    },
  };
}
