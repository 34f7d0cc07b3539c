import type { Command } from 'commander';
import { parseDuration } from '../../config/index.js';
import { UserInputError } from '../../core/errors.js';
import { checkBeforeStart, type CheckLine } from '../../doctor/index.js';
import { ARCH_RE, splitQueueName, startGpuWorker } from '../../queue/index.js';
import { loggerOf, writeLine, type CliContext } from '../context.js';

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
      if (opts.arch !== undefined && !ARCH_RE.test(opts.arch)) throw new UserInputError(`--arch ${opts.arch} is not an architecture: use sm_90 (Hopper), sm_100, ... or cpu.`);
      const gpus = parseGpus(opts.gpus);
      const concurrency = opts.concurrency === undefined ? undefined : Number(opts.concurrency);
      if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)) {
        throw new UserInputError(`--concurrency ${opts.concurrency}: give a whole number from 1 to 64.`);
      }
      const grace = opts.grace === undefined ? undefined : parseDuration(opts.grace);
      if (opts.grace !== undefined && grace === undefined) throw new UserInputError(`--grace ${opts.grace}: give a duration such as 60s or 5m.`);
      // The same checks as `kernelseek doctor --role gpu-worker`, all at once: a worker that could
      // not evaluate anything refuses to start, with every reason.
      const warnings: CheckLine[] = [];
      const config = await checkBeforeStart('kernelseek gpu-worker', 'gpu-worker', { env: ctx.env, cwd: ctx.cwd, parts: ['worker'], ...(opts.arch !== undefined ? { arch: opts.arch } : {}), ...(gpus ? { gpus } : {}) }, (l) => warnings.push(l));
      const logger = loggerOf(config, 'gpu-worker');
      for (const w of warnings) logger.warn({ check: w.name, fix: w.fix }, w.detail);
      const worker = await startGpuWorker({ config, env: ctx.env, logger, gpus, arch: opts.arch, concurrency });
      const where = worker.slots.map((s) => (s.gpuIndex === null ? 'cpu' : `GPU ${s.gpuIndex} (${s.gpuName})`)).join(', ');
      if (worker.cpuReason) writeLine(ctx.stdout, `no GPU in use (${worker.cpuReason}): serving the cpu queues`);
      // The pools first (what a person asks for), then the queues of this harness version they are.
      const pools = worker.queues.map((q) => splitQueueName(q).base);
      writeLine(ctx.stdout, `gpu-worker ${worker.id} ready: ${pools.join(', ')} on ${where}; harness ${worker.harness.version} (queues ${worker.queues.join(', ')})`);
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) resolve();
        else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      const graceSeconds = grace ?? config.queue.graceSeconds;
      writeLine(ctx.stdout, `shutting down: active jobs may finish for up to ${graceSeconds} s, then they go back to the queue`);
      await worker.close(graceSeconds);
      writeLine(ctx.stdout, 'gpu-worker stopped');
    });
}
