import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, REPO_ROOT } from '../../src/config/index.js';
import { ConfigError } from '../../src/core/errors.js';

describe('loadConfig', () => {
  it('uses the embedded database and local defaults when nothing is set', () => {
    const config = loadConfig({}, { cwd: '/srv/ks' });
    expect(config.db).toEqual({ kind: 'pglite', dataDir: '/srv/ks/.kernelseek/pgdata' });
    expect(config.core.dataDir).toBe('/srv/ks/.kernelseek');
    expect(config.core.tasksDir).toBe(path.join(REPO_ROOT, 'kernels'));
    expect(config.redis.url).toBe('redis://127.0.0.1:6379');
    expect(config.digest).toEqual({ cron: '0 9 * * *', timezone: 'UTC', channel: undefined, window: 'day' });
    expect(config.slack.port).toBe(3000);
    expect(config.slack.allowedUsers).toEqual([]);
    expect(config.harness.nvcc).toBe('nvcc');
  });

  it('selects PostgreSQL when DATABASE_URL is set and parses lists', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://ks@db:5432/ks',
      KERNELSEEK_ALLOWED_USERS: 'U01, U02ABC,',
      KERNELSEEK_DATA_DIR: 'state',
      PORT: '8080',
    }, { cwd: '/home/a' });
    expect(config.db).toEqual({ kind: 'postgres', url: 'postgres://ks@db:5432/ks' });
    expect(config.slack.allowedUsers).toEqual(['U01', 'U02ABC']);
    expect(config.core.dataDir).toBe('/home/a/state');
    expect(config.slack.port).toBe(8080);
  });

  it('lists every problem at once, naming the variable and a valid value', () => {
    let error: unknown;
    try {
      loadConfig({
        DATABASE_URL: 'mysql://db/ks',
        REDIS_URL: 'localhost:6379',
        PORT: '99999',
        DIGEST_CRON: 'every morning',
        DIGEST_TZ: 'Mars/Olympus',
        SLACK_BOT_TOKEN: 'xoxp-user-token',
        KERNELSEEK_ALLOWED_CHANNELS: 'general',
        LOG_LEVEL: 'loud',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    const byVar = Object.fromEntries(problems.map((p) => [p.split(':')[0], p]));
    expect(Object.keys(byVar).sort()).toEqual(
      ['DATABASE_URL', 'DIGEST_CRON', 'DIGEST_TZ', 'KERNELSEEK_ALLOWED_CHANNELS', 'LOG_LEVEL', 'PORT', 'REDIS_URL', 'SLACK_BOT_TOKEN'].sort(),
    );
    expect(byVar.DATABASE_URL).toContain('e.g. postgres://');
    expect(byVar.REDIS_URL).toContain('redis://127.0.0.1:6379');
    expect(byVar.PORT).toContain('between 1 and 65535');
    expect(byVar.DIGEST_CRON).toContain('0 9 * * *');
    expect(byVar.DIGEST_TZ).toContain('Europe/Berlin');
    expect(byVar.SLACK_BOT_TOKEN).toContain('xoxb-');
    expect(byVar.KERNELSEEK_ALLOWED_CHANNELS).toContain('C012AB3CD');
    expect(byVar.LOG_LEVEL).toContain('debug');
  });

  it('treats empty variables as unset', () => {
    const config = loadConfig({ DATABASE_URL: '', PORT: ' ', DIGEST_TZ: '' }, { cwd: '/x' });
    expect(config.db.kind).toBe('pglite');
    expect(config.slack.port).toBe(3000);
    expect(config.digest.timezone).toBe('UTC');
  });
});
