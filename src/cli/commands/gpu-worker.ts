import type { Command } from 'commander';
import { parseDuration } from '../../config/index.js';
import { UserInputError } from '../../core/errors.js';
import { checkRedis, startGpuWorker } from '../../queue/index.js';
import { configOf, loggerOf, writeLine, type CliContext } from '../context.js';

interface GpuWorkerOpts {
  gpus?: string;
  arch?: string;
  concurrency?: string;
  grace?: string;
}

function parseGpus(text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  const list = text.split(',').map((s) => s.trim()).filter(Boolean);
  const gpus = list.map(Number);
  if (list.length === 0 || gpus.some((g) => !Number.isInteger(g) || g < 0)) {
    throw new UserInputError(`--gpus ${text}: give GPU indices as nvidia-smi numbers them, e.g. --gpus 0,1.`);
  }
  return [...new Set(gpus)];
}

export function registerGpuWorker(program: Command, ctx: CliContext): void {
  program
    .command('gpu-worker')
    .description('Take evaluation and gpu_bash jobs from Redis and run them on this host, one job per GPU at a time')
    .option('--gpus <list>', 'GPU indices to use (nvidia-smi numbering), e.g. 0,1 (default: all)')
    .option('--arch <arch>', "the queues' architecture, e.g. sm_90 (default: the GPUs' own; cpu on a host without GPUs)")
    .option('--concurrency <n>', 'parallel jobs on a host without GPUs (default 1; a GPU always takes one job at a time)')
    .option('--grace <duration>', 'on SIGTERM, how long active jobs may finish before they are handed back (default: KERNELSEEK_WORKER_GRACE, 60s)')
    .addHelpText(
      'after',
      '\nA crashed worker\'s job is picked up by another within about KERNELSEEK_WORKER_LOCK +\nKERNELSEEK_WORKER_STALLED_CHECK (10 s + 5 s by default); see docs/queue.md.',
    )
    .action(async (opts: GpuWorkerOpts) => {
      const config = configOf(ctx);
      const concurrency = opts.concurrency === undefined ? undefined : Number(opts.concurrency);
      if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)) {
        throw new UserInputError(`--concurrency ${opts.concurrency}: give a whole number from 1 to 64.`);
      }
      const grace = opts.grace === undefined ? config.queue.graceSeconds : parseDuration(opts.grace);
      if (grace === undefined) throw new UserInputError(`--grace ${opts.grace}: give a duration such as 60s or 5m.`);
      const logger = loggerOf(config, 'gpu-worker');
      await checkRedis(config.redis.url);
      const worker = await startGpuWorker({ config, env: ctx.env, logger, gpus: parseGpus(opts.gpus), arch: opts.arch, concurrency });
      const where = worker.slots.map((s) => (s.gpuIndex === null ? 'cpu' : `GPU ${s.gpuIndex} (${s.gpuName})`)).join(', ');
      if (worker.cpuReason) writeLine(ctx.stdout, `no GPU in use (${worker.cpuReason}): serving the cpu queues`);
      writeLine(ctx.stdout, `gpu-worker ${worker.id} ready: ${worker.queues.join(', ')} on ${where}; harness ${worker.slots[0]?.executor.harnessVersion ?? 'unknown'}`);
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) resolve();
        else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      writeLine(ctx.stdout, `shutting down: active jobs may finish for up to ${grace} s, then they go back to the queue`);
      await worker.close(grace);
      writeLine(ctx.stdout, 'gpu-worker stopped');
    });
}
