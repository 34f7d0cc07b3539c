import type { Context } from '@slack/bolt';
import type { SlackDeps } from '../../deps.js';
import type { SlackResponseState } from '../../receiver/signed-receiver.js';

/** Slack delivers a failed event three more times (at once, after 1 and after 5 minutes), then gives up. */
export const LAST_SLACK_RETRY = 3;

export interface FailedEvent {
  type?: string;
  user?: string;
  channel?: string;
  thread_ts?: string;
  item?: { channel?: string };
}

/**
 * Whether Slack will deliver this event again *and* the next delivery will be handled: only while
 * it has not been answered yet (the receiver then answers 500), its id was forgotten, and retries
 * remain. Socket Mode acknowledges before listeners run, so there it never will.
 */
export function slackWillRetry(context: Context, released: boolean): boolean {
  const response = context.slackResponse as SlackResponseState | undefined;
  if (!response || response.sent()) return false;
  return released && (context.retryNum ?? 0) < LAST_SLACK_RETRY;
}

/**
 * Tells the person that what they wrote was not taken and must be sent again, when no retry from
 * Slack will bring it back: a reply that cannot be stored is never lost silently.
 */
export function tellNotTaken(deps: Pick<SlackDeps, 'poster'>, event: FailedEvent | undefined): void {
  if (!event?.user) return;
  const text =
    ':warning: KernelSeek could not take your message (an error on our side, logged: the database may be unavailable), so nothing was done with it. Please send it again in a minute.';
  if (event.type === 'message' && event.channel) {
    void deps.poster.postEphemeral({ channel: event.channel, user: event.user, ...(event.thread_ts ? { threadTs: event.thread_ts } : {}), text });
  } else if (event.item?.channel) {
    void deps.poster.postEphemeral({ channel: event.item.channel, user: event.user, text });
  }
}
