import type { App } from '@slack/bolt';
import type { SlackDeps } from '../../deps.js';
import { PROMOTE_REACTIONS } from '../../views/action-ids.js';
import { slackWillRetry, tellNotTaken, type FailedEvent } from './unhandled-notice.js';

interface EventBody {
  type?: string;
  event_id?: string;
  event?: FailedEvent & { type?: string; thread_ts?: string; bot_id?: string; reaction?: string };
}

/**
 * Only events that can act are worth remembering: a reply in a thread, a promoting reaction. Every
 * other message in the channels the bot is in would otherwise cost a database write.
 */
function canAct(event: EventBody['event']): boolean {
  if (event?.type === 'message') return Boolean(event.thread_ts) && !event.bot_id;
  if (event?.type === 'reaction_added') return (PROMOTE_REACTIONS as readonly string[]).includes(event.reaction ?? '');
  return true;
}

/**
 * Slack redelivers an event it thinks we missed (`X-Slack-Retry-Num`), sometimes to another replica.
 * The first delivery of an event id wins, across processes (the id is stored); every other delivery
 * is acknowledged and dropped.
 *
 * An event whose handling fails (the database is down) is not counted as handled: its id is
 * forgotten and the error rethrown, so the receiver answers 500 and Slack's next delivery is
 * handled. When no such delivery will come (already answered, Socket Mode, the last retry, or the
 * id could not be forgotten), the person is told to send it again.
 */
export function registerEventDedupe(app: App, deps: Pick<SlackDeps, 'store' | 'logger' | 'poster'>): void {
  app.use(async ({ body, context, next }) => {
    const b = body as EventBody;
    if (!(b.type === 'event_callback' && b.event_id && canAct(b.event))) return next();
    const eventId = b.event_id;
    const failed = async (error: unknown, marked: boolean) => {
      const released = marked ? await deps.store.slackEvents.forget(eventId).then(() => true, () => false) : true;
      const retry = slackWillRetry(context, released);
      deps.logger.error({ err: error, eventId, retryNum: context.retryNum, released, slackRetries: retry }, retry ? 'a Slack event failed; Slack will deliver it again' : 'a Slack event failed and will not be delivered again; its author is told');
      if (!retry) tellNotTaken(deps, b.event);
    };
    let first: boolean;
    try {
      first = await deps.store.slackEvents.markSeen(eventId, b.event?.type ?? 'event');
    } catch (error) {
      await failed(error, false);
      throw error;
    }
    if (!first) {
      deps.logger.info({ eventId, retryNum: context.retryNum, retryReason: context.retryReason }, 'duplicate Slack event delivery dropped');
      return;
    }
    try {
      await next();
    } catch (error) {
      await failed(error, true);
      throw error;
    }
  });
}

/** Slack retries a delivery for minutes, not days: ids older than this are forgotten. */
export const EVENT_MEMORY_MS = 24 * 3600 * 1000;
