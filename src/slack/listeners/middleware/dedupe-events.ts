import type { App } from '@slack/bolt';
import type { SlackDeps } from '../../deps.js';

/**
 * Slack redelivers an event it thinks we missed (`X-Slack-Retry-Num`), sometimes to another replica.
 * The first delivery of an event id wins, across processes (the id is stored); every other delivery
 * is acknowledged and dropped.
 */
export function registerEventDedupe(app: App, deps: Pick<SlackDeps, 'store' | 'logger'>): void {
  app.use(async ({ body, context, next }) => {
    const b = body as { type?: string; event_id?: string; event?: { type?: string } };
    if (b.type === 'event_callback' && b.event_id) {
      const first = await deps.store.slackEvents.markSeen(b.event_id, b.event?.type ?? 'event');
      if (!first) {
        deps.logger.info({ eventId: b.event_id, retryNum: context.retryNum, retryReason: context.retryReason }, 'duplicate Slack event delivery dropped');
        return;
      }
    }
    await next();
  });
}
