import cronParser from 'cron-parser';
import { z } from 'zod';
import { optionalString } from '../fields.js';

const blank = (v: unknown) => (v === '' ? undefined : v);

function validZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * Why BullMQ would refuse `cron`, or undefined when it takes it. Checked with cron-parser, the very
 * parser (and version) BullMQ's job scheduler uses, so an expression that passes here cannot fail
 * later inside `serve`; five fields only, because that is what the README documents.
 */
export function cronProblem(cron: string): string | undefined {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) return `has ${fields.length} field(s): give five (minute hour day-of-month month day-of-week), e.g. "0 9 * * *" (09:00 every day)`;
  try {
    cronParser.parseExpression(cron, { tz: 'UTC' }).next();
    return undefined;
  } catch (error) {
    return `is not a valid cron expression (${(error as Error).message}): give five fields (minute 0-59, hour 0-23, day 1-31, month 1-12, weekday 0-7), e.g. "0 9 * * *"`;
  }
}

export const DigestEnvSchema = z.object({
  DIGEST_CRON: z.preprocess(
    blank,
    z
      .string()
      .default('0 9 * * *')
      // The time zone changes when a schedule fires, never whether it is valid: checked under UTC.
      .superRefine((cron, ctx) => {
        const problem = cronProblem(cron);
        if (problem) ctx.addIssue({ code: 'custom', message: `must be a cron expression BullMQ accepts: it ${problem}` });
      }),
  ),
  DIGEST_TZ: z.preprocess(blank, z.string().default('UTC').refine(validZone, { message: 'must be an IANA time zone, e.g. UTC or Europe/Berlin' })),
  DIGEST_CHANNEL: optionalString(),
  DIGEST_WINDOW: z.preprocess(blank, z.enum(['day', 'week'], { message: 'must be day or week (how much time one digest covers)' }).default('day')),
});

export interface DigestConfig {
  cron: string;
  timezone: string;
  /** No channel: the scheduler posts nothing (the terminal digest still works). */
  channel: string | undefined;
  /** How much time one digest covers, ending when it is posted: the last day or the last week. */
  window: 'day' | 'week';
}
