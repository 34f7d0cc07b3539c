import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packWorkspace } from '../../src/queue/archive.js';
import { createBullmqDispatcher } from '../../src/queue/bullmq-dispatcher.js';
import { redisOptionsFromUrl } from '../../src/queue/connection.js';
import { marker, sleep, sleepers } from '../support/attack-kit.js';
import { createTempDir } from '../support/db.js';
import { newPrefix, REDIS_URL, TEST_RESULT_KEY, removePrefix, startWorker, workerEnv, type WorkerProcess } from '../queue/support.js';

// gpu_bash on a worker host: a real `kernelseek gpu-worker` process serving the cpu queue, with
// credentials in its environment. The command tries to read the worker's environment (its own,
// /proc/*/environ), to reach Redis, the host's files, and to leave a process behind.
const SECRETS = { ANTHROPIC_API_KEY: 'sk-ant-worker-attack-9017', KERNELSEEK_TEST_WORKER_SECRET: 'worker-only-secret-5531', SLACK_BOT_TOKEN: 'xoxb-9-9-workerattack' };

describe('gpu_bash through a gpu-worker', () => {
  let tmp: { dir: string; remove(): Promise<void> };
  let worker: WorkerProcess;
  let dispatcher: ReturnType<typeof createBullmqDispatcher>;
  let archive: Buffer;
  const prefix = newPrefix('attack');
  beforeAll(async () => {
    tmp = await createTempDir('ks-attacks-worker-');
    const ws = path.join(tmp.dir, 'ws');
    await mkdir(ws);
    await writeFile(path.join(ws, 'kernel.cpp'), 'int main() {}\n');
    archive = await packWorkspace(ws);
    worker = startWorker('cli', workerEnv(prefix, path.join(tmp.dir, 'data'), SECRETS));
    await worker.waitFor(/gpu-worker .* ready: eval-cpu, gpu-bash-cpu/);
    dispatcher = createBullmqDispatcher({ connection: redisOptionsFromUrl(REDIS_URL), prefix, resultKey: TEST_RESULT_KEY });
  }, 120_000);
  afterAll(async () => {
    await dispatcher?.close();
    await worker?.stop();
    await removePrefix(prefix);
    await tmp?.remove();
  });

  it('sees no credential, no Redis, no host file, and leaves no process', { timeout: 120_000 }, async () => {
    const m = marker();
    const dataDir = path.join(tmp.dir, 'data');
    const r = await dispatcher.gpuBash({
      runId: 'ks-attack',
      seq: 1,
      command: [
        'env',
        'for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$f"; done',
        `cat /proc/${worker.child.pid}/environ 2>&1`,
        'for p in 6379 5432; do (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && echo "REACHED $p"; done',
        `ls ${dataDir} ${tmp.dir} /root 2>/dev/null && echo SAW-HOST`,
        "printf 'nul\\0byte\\n'",
        `setsid sleep ${m} & echo finished`,
      ].join('; '),
      archive,
      timeoutSeconds: 30,
    });
    expect(r.output).toContain('finished');
    for (const secret of Object.values(SECRETS)) expect(r.output).not.toContain(secret);
    expect(r.output).not.toMatch(/REDIS_URL|KERNELSEEK_QUEUE_PREFIX|REACHED|SAW-HOST/);
    expect(r.output).toContain('nul\\0byte');
    await sleep(5000);
    expect(sleepers(m)).toEqual([]);
  });
});
