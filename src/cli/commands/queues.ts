import type { Command } from 'commander';
import { Redis } from 'ioredis';
import { checkRedis, collectQueuesReport, computeHarnessVersion, createQueueClient, redisOptionsFromUrl } from '../../queue/index.js';
import { configOf, writeLine, type CliContext } from '../context.js';
import { renderTable, terminalWidth } from '../table.js';

function age(iso: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return `${s} s ago`;
}

export function registerQueues(program: Command, ctx: CliContext): void {
  program
    .command('queues')
    .description('Show waiting, active, delayed, failed and completed jobs per queue, and the GPU workers attached')
    .option('--json', 'print the report as JSON')
    .action(async (opts: { json?: boolean }) => {
      const config = configOf(ctx);
      await checkRedis(config.redis.url);
      const connection = redisOptionsFromUrl(config.redis.url);
      const client = createQueueClient({ connection, prefix: config.queue.prefix });
      const redis = new Redis(connection);
      try {
        const harness = await computeHarnessVersion(config.core.repoRoot);
        const report = await collectQueuesReport(client, redis, config.queue.prefix, harness);
        if (opts.json) {
          writeLine(ctx.stdout, JSON.stringify(report, null, 2));
          return;
        }
        writeLine(
          ctx.stdout,
          renderTable(
            ['queue', 'waiting', 'active', 'delayed', 'failed', 'completed'],
            report.queues.map((q) => [q.name, ...[q.counts.waiting, q.counts.active, q.counts.delayed, q.counts.failed, q.counts.completed].map(String)]),
            { width: terminalWidth(ctx.stdout) },
          ),
        );
        writeLine(ctx.stdout);
        writeLine(ctx.stdout, `this checkout's harness: ${harness.version} (its jobs go to the queues ending @${harness.id}; a worker takes jobs only from its own version's queues)`);
        if (report.workers.length === 0) {
          writeLine(ctx.stdout, `no workers attached (prefix ${report.prefix}); start one with \`kernelseek gpu-worker\` on a GPU host`);
          return;
        }
        const now = Date.now();
        writeLine(
          ctx.stdout,
          renderTable(
            ['worker', 'arch', 'gpus', 'busy', 'driver', 'harness', 'heartbeat'],
            report.workers.map((w) => [
              w.id,
              w.arch,
              w.slots.map((s) => (s.gpuIndex === null ? 'cpu' : `${s.gpuIndex}:${s.gpuName ?? '?'}`)).join(' '),
              w.slots.filter((s) => s.jobId).map((s) => s.jobId).join(' ') || '-',
              w.driver ?? '-',
              w.harnessVersion === harness.version ? `${w.harnessVersion} (same)` : `${w.harnessVersion ?? 'unknown'} (other)`,
              age(w.lastBeat, now),
            ]),
            { width: terminalWidth(ctx.stdout) },
          ),
        );
      } finally {
        await client.close();
        redis.disconnect();
      }
    });
}
