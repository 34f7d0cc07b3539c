import { describe, expect, it } from 'vitest';
import { checkHealth, startHealthServer } from '../../src/slack/index.js';

describe('/healthz', () => {
  it('is 200 when every dependency answers, 503 naming the one that failed or hung', async () => {
    const healthy = await checkHealth([{ name: 'database', check: async () => {} }]);
    expect(healthy).toMatchObject({ ok: true, checks: { database: { ok: true } } });

    const report = () =>
      checkHealth(
        [
          { name: 'database', check: async () => {} },
          { name: 'redis', check: () => new Promise(() => {}) },
          { name: 'disk', check: async () => Promise.reject(new Error('read-only file system')) },
        ],
        200,
      );
    const server = await startHealthServer(0, report);
    try {
      const port = (server.address() as { port: number }).port;
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({
        ok: false,
        checks: { database: { ok: true }, redis: { ok: false, error: 'no answer within 200 ms' }, disk: { ok: false, error: 'read-only file system' } },
      });
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
