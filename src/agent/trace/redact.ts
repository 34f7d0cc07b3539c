import type { Config } from '../../config/index.js';

export const REDACTED = '[REDACTED]';

/** Secret shapes worth hiding wherever they appear (keys, tokens, credentials in URLs and headers). */
const RULES: { pattern: RegExp; replace: (match: string, ...groups: string[]) => string }[] = [
  { pattern: /sk-ant-[A-Za-z0-9_-]{8,}/g, replace: () => REDACTED },
  { pattern: /\bsk-[A-Za-z0-9_-]{16,}/g, replace: () => REDACTED },
  { pattern: /\bxox[abposr]-[A-Za-z0-9-]{8,}/g, replace: () => REDACTED },
  { pattern: /\bxapp-[A-Za-z0-9-]{8,}/g, replace: () => REDACTED },
  { pattern: /\bgh[pousr]_[A-Za-z0-9]{20,}/g, replace: () => REDACTED },
  { pattern: /\bAKIA[0-9A-Z]{16}\b/g, replace: () => REDACTED },
  { pattern: /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, replace: (_m, scheme) => `${scheme} ${REDACTED}` },
  {
    pattern: /\b([A-Za-z0-9_-]*?(?:api[-_]?key|authorization|token|secret|password|passwd))(["']?\s*[:=]\s*["']?)[^\s"',;}]{4,}/gi,
    replace: (_m, name, sep) => `${name}${sep}${REDACTED}`,
  },
  { pattern: /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+(@)/gi, replace: (_m, head, at) => `${head}${REDACTED}${at}` },
];

const SECRET_KEYS = /^(authorization|x-api-key|api[-_]?key|apikey|token|access[-_]?token|auth[-_]?token|secret|password|signing[-_]?secret|cookie|set-cookie)$/i;

/** The configured credentials: their exact values are redacted wherever they appear. */
export function configuredSecrets(config: Config): string[] {
  const values = [config.anthropic.apiKey, config.slack.botToken, config.slack.signingSecret, config.slack.appToken, ...config.agent.extraSecrets];
  if (config.db.kind === 'postgres') {
    try {
      const password = new URL(config.db.url).password;
      if (password) values.push(decodeURIComponent(password));
    } catch {
      // an unparseable URL has no password to hide
    }
  }
  return values.filter((v): v is string => typeof v === 'string' && v.length >= 4);
}

export function redactString(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join(REDACTED);
  for (const rule of RULES) out = out.replace(rule.pattern, rule.replace as (m: string, ...g: unknown[]) => string);
  return out;
}

/** A deep copy of `value` with every secret hidden: values of secret-named keys and secret-shaped strings. */
export function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redactString(value, secrets);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, secrets));
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEYS.test(k) && v != null && v !== '' ? REDACTED : redactValue(v, secrets);
    return out;
  }
  return value;
}
