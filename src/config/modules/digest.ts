import { z } from 'zod';
import { optionalString } from '../fields.js';

/** Five-field cron: minute hour day-of-month month day-of-week. */
const CRON_FIELD = /^(\*|\d+(-\d+)?)(\/\d+)?(,(\*|\d+(-\d+)?)(\/\d+)?)*$/;

export const DigestEnvSchema = z.object({
  DIGEST_CRON: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .default('0 9 * * *')
      .refine((s) => {
        const fields = s.trim().split(/\s+/);
        return fields.length === 5 && fields.every((f) => CRON_FIELD.test(f));
      }, { message: 'must be a five-field cron expression, e.g. "0 9 * * *" (09:00 every day)' }),
  ),
  DIGEST_TZ: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .default('UTC')
      .refine((tz) => {
        try {
          new Intl.DateTimeFormat('en', { timeZone: tz });
          return true;
        } catch {
          return false;
        }
      }, { message: 'must be an IANA time zone, e.g. UTC or Europe/Berlin' }),
  ),
  DIGEST_CHANNEL: optionalString(),
});

export interface DigestConfig {
  cron: string;
  timezone: string;
  /** No channel: the scheduler posts nothing (the terminal digest still works). */
  channel: string | undefined;
}
