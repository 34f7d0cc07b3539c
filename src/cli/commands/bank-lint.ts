import type { Command } from 'commander';
import { formatBankProblem, KINDS, lintBank, TRIGGERS } from '../../questions/index.js';
import { writeLine, type CliContext } from '../context.js';
import { bankDirOf, type BankGlobalOptions } from './bank-shared.js';

export function registerBankLint(bank: Command, ctx: CliContext): void {
  bank
    .command('lint')
    .description('Check the bank: schema, unique ids and texts, questions only, known triggers and placeholders, no listed term')
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<BankGlobalOptions>();
      const dir = bankDirOf(ctx, opts);
      const result = await lintBank(dir, { cwd: ctx.cwd });
      if (opts.json) {
        writeLine(ctx.stdout, JSON.stringify({ files: result.files, questions: result.entries.length, terms: result.terms.length, problems: result.problems }, null, 2));
      } else {
        for (const p of result.problems) writeLine(ctx.stdout, formatBankProblem(p));
        const count = (pick: (e: (typeof result.entries)[number]) => readonly string[], names: readonly string[]) =>
          names.map((n) => `${n} ${result.entries.filter((e) => pick(e).includes(n)).length}`).join(', ');
        writeLine(
          ctx.stdout,
          `${result.problems.length === 0 ? 'ok' : `${result.problems.length} problem(s)`}: ${result.entries.length} valid question(s) in ${result.files.length} file(s), ${result.terms.length} terms.` +
            `\n  triggers: ${count((e) => e.triggers, TRIGGERS)}\n  kinds: ${count((e) => [e.kind], KINDS)}`,
        );
      }
      if (result.problems.length > 0) ctx.exitCode = 1;
    });
}
