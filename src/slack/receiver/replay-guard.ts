import { createHash } from 'node:crypto';
import type { Store } from '../../db/index.js';

/**
 * A signed request is valid for its whole ±5-minute window, so whoever captures one (a proxy log,
 * a leaked HAR file) could send it again. Slack signs every delivery afresh (its own retries come
 * minutes apart, which an unchanged timestamp would not survive), so the same signature twice is
 * a replay: the first one wins, across replicas.
 */
export interface ReplayGuard {
  /** True the first time this signed request is seen. */
  claim(timestamp: number, signature: string): Promise<boolean>;
}

/** The key remembered for a signed request: a hash of what Slack signed (timestamp and signature). */
export function replayKey(timestamp: number, signature: string): string {
  return `request:${createHash('sha256').update(`${timestamp}:${signature}`).digest('hex')}`;
}

/**
 * Remembered in slack_events, beside event ids, so it holds across replicas; the hourly clean-up
 * of old event ids forgets these too (24 hours, well past the 5-minute window).
 */
export function createStoreReplayGuard(store: Pick<Store, 'slackEvents'>): ReplayGuard {
  return {
    claim: (timestamp, signature) => store.slackEvents.markSeen(replayKey(timestamp, signature), 'signed_request'),
  };
}
