import type { App } from '@slack/bolt';
import type { SlackDeps } from '../../deps.js';
import { PROMOTE_REACTIONS } from '../../views/action-ids.js';

interface EventBody {
  type?: string;
  event_id?: string;
  event?: { type?: string; thread_ts?: string; bot_id?: string; reaction?: string };
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
 */
export function registerEventDedupe(app: App, deps: Pick<SlackDeps, 'store' | 'logger'>): void {
  app.use(async ({ body, context, next }) => {
    const b = body as EventBody;
    if (b.type === 'event_callback' && b.event_id && canAct(b.event)) {
      const first = await deps.store.slackEvents.markSeen(b.event_id, b.event?.type ?? 'event');
      if (!first) {
        deps.logger.info({ eventId: b.event_id, retryNum: context.retryNum, retryReason: context.retryReason }, 'duplicate Slack event delivery dropped');
        return;
      }
    }
    await next();
  });
}

/** Slack retries a delivery for minutes, not days: ids older than this are forgotten. */
export const EVENT_MEMORY_MS = 24 * 3600 * 1000;
