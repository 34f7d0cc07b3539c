import ms, { type StringValue } from 'ms';
import { z } from 'zod';

/**
 * Field builders for environment variables. Every message says what a valid value looks like,
 * because the person reading it is fixing a deployment, not reading our code.
 */

/** An unset or empty variable counts as unset. */
const blankToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

export const optionalString = () => z.preprocess(blankToUndefined, z.string().optional());

export const url = (example: string, protocols: string[]) =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .refine(
        (s) => {
          try {
            return protocols.includes(new URL(s).protocol);
          } catch {
            return false;
          }
        },
        { message: `must be a URL with scheme ${protocols.join(' or ')}, e.g. ${example}` },
      )
      .optional(),
  );

export const positiveInt = (fallback: number, example = String(fallback)) =>
  z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ message: `must be a whole number, e.g. ${example}` })
      .int({ message: `must be a whole number, e.g. ${example}` })
      .positive({ message: `must be greater than 0, e.g. ${example}` })
      .default(fallback),
  );

export const port = (fallback: number) =>
  z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ message: 'must be a TCP port number between 1 and 65535, e.g. 3000' })
      .int({ message: 'must be a TCP port number between 1 and 65535, e.g. 3000' })
      .min(1, { message: 'must be a TCP port number between 1 and 65535, e.g. 3000' })
      .max(65535, { message: 'must be a TCP port number between 1 and 65535, e.g. 3000' })
      .default(fallback),
  );

/** Comma-separated list; empty entries dropped. Each entry must match `pattern`. */
export const csv = (pattern: RegExp, what: string, example: string) =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .optional()
      .transform((s) => (s === undefined ? [] : s.split(',').map((x) => x.trim()).filter(Boolean)))
      .refine((list) => list.every((x) => pattern.test(x)), {
        message: `must be a comma-separated list of ${what}, e.g. ${example}`,
      }),
  );

/**
 * A duration written like `90s`, `10m`, `2h`, `1.5 hours`, `7d` (the `ms` library's units), or a
 * bare number of seconds. Parsed to seconds; undefined when it is not a duration. A bare number is
 * seconds here (ms would read milliseconds) because every duration KernelSeek takes is in seconds.
 */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(t)) return Number(t);
  // ms throws on an empty string and accepts negative durations: neither is a duration here.
  if (t === '' || t.length > 100 || t.startsWith('-')) return undefined;
  const millis = ms(t as StringValue) as number | undefined;
  return typeof millis === 'number' && Number.isFinite(millis) ? millis / 1000 : undefined;
}

export const duration = (fallback: string) =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .default(fallback)
      .refine((s) => parseDuration(s) !== undefined, {
        message: 'must be a duration such as 90s, 10m or 2h',
      })
      .transform((s) => parseDuration(s) as number),
  );

export const bool = (fallback: boolean) =>
  z.preprocess(
    blankToUndefined,
    z
      .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'], {
        message: 'must be true or false (also accepted: 1/0, yes/no, on/off)',
      })
      .optional()
      .transform((s) => (s === undefined ? fallback : ['1', 'true', 'yes', 'on'].includes(s))),
  );
