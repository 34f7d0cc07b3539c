import { parseDuration } from '../config/index.js';
import { UserInputError } from '../core/errors.js';

/** The span of time one digest reports on: `[from, to)`. */
export interface DigestWindow {
  from: Date;
  to: Date;
}

/** A scheduled digest covers the 24 hours before the moment it was scheduled for. */
export const DIGEST_PERIOD_SECONDS = 24 * 3600;

/** The calendar date of `at` in `timeZone`, as YYYY-MM-DD (the key of "one digest per day"). */
export function formatDayInZone(at: Date, timeZone: string): string {
  // en-CA formats dates as YYYY-MM-DD; formatToParts keeps us independent of that habit anyway.
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(at);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/**
 * The offset of `timeZone` from UTC at `at`, in milliseconds (positive east of Greenwich). Charts use
 * it to show wall-clock times of the digest's zone, which Vega cannot format for an arbitrary zone.
 */
export function zoneOffsetMs(at: Date, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(at);
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const asUtc = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return asUtc - Math.floor(at.getTime() / 1000) * 1000;
}

/** The windows a digest can cover (DIGEST_WINDOW, `/kernelseek digest week`), in seconds. */
export const DIGEST_WINDOWS = { day: DIGEST_PERIOD_SECONDS, week: 7 * DIGEST_PERIOD_SECONDS } as const;
export type DigestWindowName = keyof typeof DIGEST_WINDOWS;

/** `--since` for a named window. */
export function sinceOf(window: DigestWindowName): string {
  return window === 'week' ? '7d' : '24h';
}

/** The window of a scheduled digest: the period (a day by default) that ends at the time it was scheduled for. */
export function scheduledWindow(scheduledAt: Date, timeZone: string, window: DigestWindowName = 'day'): DigestWindow & { day: string } {
  return {
    from: new Date(scheduledAt.getTime() - DIGEST_WINDOWS[window] * 1000),
    to: scheduledAt,
    day: formatDayInZone(scheduledAt, timeZone),
  };
}

/**
 * The window `--since <duration>` asks for, ending now. The duration is written like `24h`, `90m`,
 * `7d` (or a number of seconds) and must be positive and at most a year.
 */
export function windowSince(since: string, now: Date): DigestWindow {
  const seconds = parseDuration(since);
  if (seconds === undefined || !(seconds > 0)) {
    throw new UserInputError(`--since must be a positive duration such as 24h, 90m or 7d (got ${JSON.stringify(since)})`, {
      code: 'digest_since_invalid',
    });
  }
  if (seconds > 366 * 86400) {
    throw new UserInputError(`--since may cover at most a year (got ${since})`, { code: 'digest_since_invalid' });
  }
  return { from: new Date(now.getTime() - seconds * 1000), to: now };
}
