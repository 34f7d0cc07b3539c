import type { Command } from 'commander';
import { openDatabase, redact } from '../../db/index.js';
import { configOf, writeLine, type CliContext } from '../context.js';

export function registerMigrate(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description('Apply database migrations (PostgreSQL from DATABASE_URL, else the embedded database)')
    .action(async () => {
      const config = configOf(ctx);
      const handle = await openDatabase(config.db);
      try {
        const { applied } = await handle.migrate();
        const where = config.db.kind === 'postgres' ? redact(config.db.url) : `embedded database at ${config.db.dataDir}`;
        writeLine(ctx.stdout, applied > 0 ? `Applied ${applied} migration(s) to ${where}.` : `Database is up to date (${where}).`);
      } finally {
        await handle.close();
      }
    });
}
