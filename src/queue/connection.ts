import type { RedisOptions } from 'ioredis';

/**
 * Connection options for BullMQ from a `redis://` or `rediss://` URL. BullMQ creates (and closes)
 * its own connections from options; a worker's blocking connection needs
 * `maxRetriesPerRequest: null`, so commands wait for Redis to come back instead of failing a job.
 */
export function redisOptionsFromUrl(url: string): RedisOptions {
  const u = new URL(url);
  const db = u.pathname.replace(/^\//, '');
  return {
    host: u.hostname || '127.0.0.1',
    port: u.port ? Number(u.port) : 6379,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(db ? { db: Number(db) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
}
