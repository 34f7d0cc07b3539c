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

/** A duration written like `90s`, `10m`, `2h` or a number of seconds. Parsed to seconds. */
export const DURATION_RE = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/;

export function parseDuration(text: string): number | undefined {
  const m = DURATION_RE.exec(text.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  const factor = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 }[unit] ?? 1;
  return n * factor;
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
