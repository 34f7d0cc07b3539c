import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import type { Command } from 'commander';
import { exportTrace } from '../../agent/index.js';
import { createStore, openDatabase } from '../../db/index.js';
import { configOf, writeLine, type CliContext } from '../context.js';

export function registerTrace(program: Command, ctx: CliContext): void {
  program
    .command('trace')
    .description("Export a run's whole trace (run, messages, model steps, tool calls, evaluations, questions) as JSON lines, secrets redacted")
    .argument('<run>', 'run id, e.g. ks-7f3a2c9d')
    .option('--out <file>', 'write to this file instead of standard output')
    .action(async (runId: string, opts: { out?: string }) => {
      const config = configOf(ctx);
      const handle = await openDatabase(config.db);
      try {
        await handle.migrate();
        const store = createStore(handle.db);
        if (!opts.out) {
          await exportTrace({ config, store, runId, out: ctx.stdout });
          return;
        }
        const file = path.resolve(ctx.cwd, opts.out);
        const out = createWriteStream(file);
        try {
          const { lines } = await exportTrace({ config, store, runId, out });
          out.end();
          await finished(out);
          writeLine(ctx.stderr, `Wrote ${lines} lines to ${file}.`);
        } catch (error) {
          out.destroy();
          throw error;
        }
      } finally {
        await handle.close();
      }
    });
}
