import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { exportBankYaml } from '../../questions/index.js';
import { writeLine, type CliContext } from '../context.js';
import { bankDirOf, withStore, type BankGlobalOptions } from './bank-shared.js';

export function registerBankExport(bank: Command, ctx: CliContext): void {
  bank
    .command('export')
    .description('Write the promoted questions as a bank YAML file (to commit under questions/)')
    .option('--out <file>', 'write to this file instead of standard output')
    .option('--all', 'include the shipped questions too')
    .action(async (opts: { out?: string; all?: boolean }, cmd: Command) => {
      const globals = cmd.optsWithGlobals<BankGlobalOptions>();
      const dir = bankDirOf(ctx, globals);
      const { yaml, count } = await withStore(ctx, (store) => exportBankYaml(store, { dir, includeShipped: Boolean(opts.all) }));
      if (opts.out) {
        const out = path.resolve(ctx.cwd, opts.out);
        await writeFile(out, yaml);
        writeLine(ctx.stderr, `Wrote ${count} question(s) to ${path.relative(ctx.cwd, out) || out}.`);
      } else {
        ctx.stdout.write(yaml);
      }
    });
}
