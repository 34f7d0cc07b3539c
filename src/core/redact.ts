/**
 * Hiding credentials in text that leaves the process: traces (`kernelseek trace`) and logs. Two
 * layers: the exact values of configured secrets (the caller passes them), and secret *shapes*
 * wherever they appear, whatever produced them (a model's message, a tool's output, a driver's
 * error naming its connection string).
 */

export const REDACTED = '[REDACTED]';

type Rule = { pattern: RegExp; replace: (match: string, ...groups: string[]) => string };

/** A URL's user-info without a password is hidden only when it looks like a token (`https://<token>@host`). */
const TOKEN_LIKE_USER = /^[A-Za-z0-9_.~-]{20,}$/;

const RULES: Rule[] = [
  { pattern: /sk-ant-[A-Za-z0-9_-]{8,}/g, replace: () => REDACTED },
  { pattern: /\bsk-[A-Za-z0-9_-]{16,}/g, replace: () => REDACTED },
  { pattern: /\bxox[abposre]-[A-Za-z0-9-]{8,}/g, replace: () => REDACTED },
  { pattern: /\bxapp-[A-Za-z0-9-]{8,}/g, replace: () => REDACTED },
  { pattern: /\bgh[pousr]_[A-Za-z0-9]{20,}/g, replace: () => REDACTED },
  { pattern: /\bgithub_pat_[A-Za-z0-9_]{20,}/g, replace: () => REDACTED },
  { pattern: /\bAKIA[0-9A-Z]{16}\b/g, replace: () => REDACTED },
  { pattern: /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, replace: (_m, scheme) => `${scheme} ${REDACTED}` },
  // Credentials in a URL, whatever the scheme: `redis://:pw@h`, `postgres://u:pw@h`, `rediss://u:pw@h`.
  // The password runs to the last `@` before the host, so an unencoded `@` or `/` in it is hidden too.
  {
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/@:'"]*):([^\s'"]*)@(?=[^\s@'"]*(?:[\s'"]|$))/gi,
    replace: (_m, scheme, user) => `${scheme}${user}:${REDACTED}@`,
  },
  { pattern: /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/@:'"]+)@/gi, replace: (m, scheme, user) => (TOKEN_LIKE_USER.test(user) ? `${scheme}${REDACTED}@` : m) },
  // The same URL percent-encoded (a connection string passed as a query parameter).
  { pattern: /\b([a-z][a-z0-9+.-]*%3A%2F%2F[^\s%&]*%3A)[^\s&@]+?(%40)/gi, replace: (_m, head, at) => `${head}${REDACTED}${at}` },
  // Tokens in query strings: ?token=…, &sig=…, X-Amz-Signature=…, ?key=….
  {
    pattern: /([?&;](?:[A-Za-z0-9_-]*?(?:token|secret|password|passwd|pwd|signature|sig|key|credential|auth|code)))=([^&#\s"']+)/gi,
    replace: (_m, name) => `${name}=${REDACTED}`,
  },
  {
    pattern: /\b([A-Za-z0-9_-]*?(?:api[-_]?key|authorization|token|secret|password|passwd))(["']?\s*[:=]\s*["']?)(?!\[REDACTED\])[^\s"',;}&]{4,}/gi,
    replace: (_m, name, sep) => `${name}${sep}${REDACTED}`,
  },
];

const SECRET_KEYS = /^(authorization|x-api-key|api[-_]?key|apikey|token|access[-_]?token|auth[-_]?token|secret|password|signing[-_]?secret|cookie|set-cookie)$/i;

/** The password (and a token-like user) of a connection URL, to hide by value wherever it appears. */
export function urlCredentials(url: string | undefined): string[] {
  if (!url) return [];
  try {
    const parsed = new URL(url);
    const out: string[] = [];
    if (parsed.password) out.push(decodeURIComponent(parsed.password), parsed.password);
    if (parsed.username && !parsed.password && TOKEN_LIKE_USER.test(parsed.username)) out.push(parsed.username);
    return out;
  } catch {
    // an unparseable URL has no credentials to collect; the shape rules still apply
    return [];
  }
}

export function redactString(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join(REDACTED);
  for (const rule of RULES) out = out.replace(rule.pattern, rule.replace as (m: string, ...g: unknown[]) => string);
  return out;
}

/** A deep copy of `value` with every secret hidden: values of secret-named keys and secret-shaped strings. */
export function redactValue(value: unknown, secrets: readonly string[] = []): unknown {
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
