/**
 * The last guard on everything KernelSeek sends to Slack (issue 39). The views escape what they
 * interpolate (escapeMrkdwn); this is the backstop at the one boundary every payload passes, for
 * the one kind of Slack syntax KernelSeek itself never writes: a mention of a whole channel, the
 * workspace or a user group. Anything of that shape in a payload came from text we did not write
 * (a model, a candidate, a tool), so it is escaped wherever it is; our own mentions of people,
 * channels, dates and links are untouched.
 */

/** `<!channel>`, `<!here>`, `<!everyone>`, `<!group>`, `<!subteam^S…>`, each with or without a `|label`. */
const BROADCAST = /<(!(?:channel|here|everyone|group|subteam\^[^>|]*)(?:\|[^>]*)?)>/gi;

export function defuseBroadcasts(text: string): string {
  return text.includes('<!') ? text.replace(BROADCAST, (_, inner: string) => `&lt;${inner}&gt;`) : text;
}

/**
 * `payload` with every broadcast mention escaped, in every string Slack parses: message text,
 * blocks, fields, context, titles, comments, statuses, unfurls, App Home. Plain-text objects (which
 * Slack never parses for mentions) and file contents are left as they are. Copies; never changes `payload`.
 */
export function guardSlackPayload<T>(payload: T): T {
  return walk(payload, '') as T;
}

function walk(value: unknown, key: string): unknown {
  if (typeof value === 'string') return key === 'content' ? value : defuseBroadcasts(value);
  if (Array.isArray(value)) return value.map((v) => walk(v, key));
  if (value && typeof value === 'object' && !Buffer.isBuffer(value) && !(value instanceof Uint8Array)) {
    if ((value as { type?: unknown }).type === 'plain_text') return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = walk(v, k);
    return out;
  }
  return value;
}
