import { Redis, type RedisOptions } from 'ioredis';
import { ConfigError } from '../core/errors.js';

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

/**
 * Connects once with a short timeout and no retries, so a command fails at once with a clear
 * message when Redis is down (BullMQ's own connections would wait for it indefinitely).
 */
export async function checkRedis(url: string, timeoutMs = 5000): Promise<void> {
  const client = new Redis({ ...redisOptionsFromUrl(url), lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    const shown = url.replace(/\/\/[^@/]*@/, '//***@');
    throw new ConfigError([`REDIS_URL: cannot reach Redis at ${shown} (${(error as Error).message}); start Redis or point REDIS_URL at a running one`]);
  } finally {
    client.disconnect();
  }
}
