/**
 * A GPU worker that dies by SIGKILL in the middle of its first evaluation: the real worker, plus a
 * watcher that kills the process (no handlers run, no lock released) once the harness reports the
 * correctness phase of the evaluation's second scenario. It prints the harness's pid first, so the
 * test can check that the harness died with it.
 *
 * Configured like `kernelseek gpu-worker`, from the environment (REDIS_URL, KERNELSEEK_QUEUE_PREFIX,
 * KERNELSEEK_DATA_DIR, KERNELSEEK_WORKER_LOCK, ...).
 */
import { Writable } from 'node:stream';
import { QueueEvents } from 'bullmq';
import pino from 'pino';
import { loadConfig } from '../../../src/config/index.js';
import { redisOptionsFromUrl } from '../../../src/queue/connection.js';
import { startGpuWorker } from '../../../src/queue/worker/gpu-worker.js';

const config = loadConfig(process.env);
let harnessPid: number | undefined;
const logStream = new Writable({
  write(chunk: Buffer, _enc, done) {
    const text = chunk.toString();
    process.stdout.write(text);
    for (const line of text.split('\n')) {
      const m = /"harnessPid":(\d+)/.exec(line);
      if (m) harnessPid = Number(m[1]);
    }
    done();
  },
});
const logger = pino({ level: 'info', base: { name: 'crash-mid-evaluation' } }, logStream);
const worker = await startGpuWorker({ config, env: process.env, logger });
const events = new QueueEvents(worker.queues[0]!, { connection: redisOptionsFromUrl(config.redis.url), prefix: config.queue.prefix });
events.on('progress', ({ data }) => {
  const p = data as { phase?: string; i?: number };
  if (p.phase === 'correctness' && p.i === 1) {
    process.stdout.write(`crashing now: harness pid ${harnessPid}\n`);
    process.kill(process.pid, 'SIGKILL');
  }
});
await events.waitUntilReady();
process.stdout.write(`crash-mid-evaluation ${worker.id} ready on ${worker.queues.join(', ')}\n`);
