import type { webApi } from '@slack/bolt';
import type { Logger } from '../core/logger.js';

type WebClient = webApi.WebClient;

/**
 * Names and links as people read them: a person's display name (users.info) where a mention cannot
 * render (plain-text fields: Work Objects, form titles, chart titles), and a run's thread as a link
 * (chat.getPermalink). Both are reads, cached: a permalink never changes, a display name rarely, and
 * Slack's read limits are per minute. A lookup that fails gives undefined (the caller falls back to
 * a mention or the run id), and is not asked again for a minute.
 */
export interface SlackDirectory {
  /** The permalink of a message (a run's thread root), or undefined when Slack would not say. */
  permalink(channel: string, ts: string): Promise<string | undefined>;
  /** A person's display name (else real name, else handle), or undefined. */
  userName(userId: string): Promise<string | undefined>;
}

export interface DirectoryOptions {
  client: WebClient;
  logger: Logger;
  /** How long a display name is kept (default one hour). */
  nameTtlMs?: number;
  /** How long a failed lookup is not retried (default one minute). */
  failureTtlMs?: number;
  /** Entries kept per cache (least recently used dropped). */
  maxEntries?: number;
  now?: () => number;
}

interface Entry<T> {
  value: T | undefined;
  until: number;
}

function createCache<T>(maxEntries: number) {
  const entries = new Map<string, Entry<T> | Promise<T | undefined>>();
  return {
    get: (key: string) => entries.get(key),
    set(key: string, value: Entry<T> | Promise<T | undefined>) {
      entries.delete(key);
      entries.set(key, value);
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    },
    delete: (key: string) => void entries.delete(key),
  };
}

export function createSlackDirectory(options: DirectoryOptions): SlackDirectory {
  const { client, logger } = options;
  const now = options.now ?? Date.now;
  const nameTtl = options.nameTtlMs ?? 3600_000;
  const failureTtl = options.failureTtlMs ?? 60_000;
  const max = options.maxEntries ?? 2000;
  const links = createCache<string>(max);
  const names = createCache<string>(max);

  /** One lookup in flight per key; a result kept until `ttl` (failures `failureTtl`). */
  async function cached<T>(cache: ReturnType<typeof createCache<T>>, key: string, ttl: number, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const hit = cache.get(key);
    if (hit instanceof Promise) return hit;
    if (hit && hit.until > now()) return hit.value;
    const pending = load().then(
      (value) => {
        cache.set(key, { value, until: now() + (value === undefined ? failureTtl : ttl) });
        return value;
      },
      (error: unknown) => {
        logger.warn({ err: error, key }, 'Slack lookup failed; shown without it');
        cache.set(key, { value: undefined, until: now() + failureTtl });
        return undefined;
      },
    );
    cache.set(key, pending);
    return pending;
  }

  return {
    permalink: (channel, ts) =>
      cached(links, `${channel}/${ts}`, Number.POSITIVE_INFINITY, async () => {
        const res = await client.chat.getPermalink({ channel, message_ts: ts });
        return typeof res.permalink === 'string' ? res.permalink : undefined;
      }),
    userName: (userId) =>
      cached(names, userId, nameTtl, async () => {
        const res = await client.users.info({ user: userId });
        const u = res.user;
        const name = u?.profile?.display_name || u?.real_name || u?.profile?.real_name || u?.name;
        return name || undefined;
      }),
  };
}
