import { setTimeout as delay } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import { mkdir, readdir, utimes } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { startGpuWorker } from '../../src/queue/worker/gpu-worker.js';
import { sweepStaleJobDirs } from '../../src/queue/worker/sweep.js';
import { createTempDir } from '../support/db.js';

describe('GPU worker housekeeping', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  beforeAll(async () => {
    tmp = await createTempDir('ks-housekeeping-');
  });
  afterAll(() => tmp.remove());

  it('removes the temp folders a crashed worker left, once they are older than any job, and nothing else', async () => {
    const dir = path.join(tmp.dir, 'tmp');
    await mkdir(dir);
    const old = Date.now() / 1000 - 7200;
    for (const name of ['kernelseek-candidate-old', 'kernelseek-gpu-bash-old', 'kernelseek-candidate-new', 'someone-elses-old']) {
      await mkdir(path.join(dir, name));
      if (name.endsWith('-old')) await utimes(path.join(dir, name), old, old);
    }
    const removed = await sweepStaleJobDirs(3600, dir);
    expect(removed.map((p) => path.basename(p)).sort()).toEqual(['kernelseek-candidate-old', 'kernelseek-gpu-bash-old']);
    expect((await readdir(dir)).sort()).toEqual(['kernelseek-candidate-new', 'someone-elses-old']);
  });

  it('closes (as on SIGTERM) even when Redis has gone away', async () => {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await delay(500);
    const config = loadConfig({ REDIS_URL: `redis://127.0.0.1:${port}`, KERNELSEEK_DATA_DIR: path.join(tmp.dir, 'data') });
    const worker = await startGpuWorker({ config, env: { PATH: process.env.PATH }, logger: silentLogger, nvidiaSmi: '/nonexistent', closeTimeoutSeconds: 1 });
    redis.kill('SIGKILL');
    await new Promise((r) => redis.once('exit', r));
    const started = Date.now();
    await worker.close(0.5);
    expect(Date.now() - started).toBeLessThan(8_000);
  });
});
