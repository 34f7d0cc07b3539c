/**
 * A lane is a FIFO of Slack calls that share one rate limit: one channel's messages (Slack allows
 * about one per second per channel), or the workspace's `chat.update` calls (Tier 3, ~50 a minute).
 * One call is in flight per lane, so messages in a thread keep their order; a 429 pauses the lane
 * for Retry-After seconds and the call at its head is tried again.
 */
export interface LanePolicy {
  /** Least time between the starts of two calls in this lane. */
  minIntervalMs: number;
}

export interface Lane<J> {
  key: string;
  policy: LanePolicy;
  queue: J[];
  running: boolean;
  /** Epoch ms before which the next call may not start (pacing). */
  nextAt: number;
  /** Epoch ms until which Slack asked us to wait (Retry-After). */
  pausedUntil: number;
}

export function createLane<J>(key: string, policy: LanePolicy): Lane<J> {
  return { key, policy, queue: [], running: false, nextAt: 0, pausedUntil: 0 };
}

/** Milliseconds until the lane may start its next call. */
export function laneWaitMs(lane: Lane<unknown>, now: number): number {
  return Math.max(0, Math.max(lane.nextAt, lane.pausedUntil) - now);
}
