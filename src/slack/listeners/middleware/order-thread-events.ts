import type { App } from '@slack/bolt';
import { createKeyedSerializer } from '../serialize.js';

/**
 * Replies in one thread are handled one at a time, in the order their events arrived. Registered
 * first, before any middleware that awaits (the database), so a reply cannot overtake the one
 * before it while that one is being deduplicated or stored.
 */
export function registerThreadOrdering(app: App): void {
  const serialize = createKeyedSerializer();
  app.use(async ({ body, next }) => {
    const event = (body as { type?: string; event?: { type?: string; channel?: string; thread_ts?: string } }).event;
    if ((body as { type?: string }).type === 'event_callback' && event?.type === 'message' && event.channel && event.thread_ts) {
      await serialize(`${event.channel}:${event.thread_ts}`, () => next());
      return;
    }
    await next();
  });
}
