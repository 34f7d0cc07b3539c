import type { Command } from 'commander';
import { attributeGains, collectAskSummary, DEFAULT_ATTRIBUTION_K, loadBank } from '../../questions/index.js';
import { writeLine, type CliContext } from '../context.js';
import { writeRows } from '../table.js';
import { registerBankExport } from './bank-export.js';
import { registerBankLint } from './bank-lint.js';
import { registerBankPromote } from './bank-promote.js';
import { attributionKOf, bankDirOf, withStore, type BankGlobalOptions } from './bank-shared.js';

const formatGain = (g: number | null) => (g === null ? '-' : `${g.toFixed(2)}x`);
const formatDate = (d: Date | null) => (d ? d.toISOString().slice(0, 16).replace('T', ' ') : '-');

export function registerBank(program: Command, ctx: CliContext): void {
  const bank = program
    .command('bank')
    .description('List the question bank with how often each question was asked and the gain that followed')
    .option('--json', 'print JSON instead of a table')
    .option('--dir <folder>', 'the bank folder (default: questions/ in this checkout)')
    .option('--k <evaluations>', `evaluations after a question over which its gain is measured (default ${DEFAULT_ATTRIBUTION_K})`)
    .configureHelp({ showGlobalOptions: true })
    .action(async (opts: BankGlobalOptions) => {
      const dir = bankDirOf(ctx, opts);
      const k = attributionKOf(opts);
      await withStore(ctx, async (store) => {
        // Attribution is incremental and idempotent, so the figures shown are always current.
        await attributeGains(store, { k });
        const loaded = await loadBank({ dir, store, cwd: ctx.cwd });
        const { byBankId, people } = await collectAskSummary(store);
        const rows = loaded.entries.map((e) => {
          const s = byBankId.get(e.id);
          return {
            id: e.id,
            kind: e.kind,
            triggers: e.triggers,
            source: e.source,
            text: e.text,
            placeholders: e.placeholders,
            asks: s?.asks ?? 0,
            attributed: s?.attributed ?? 0,
            meanGain: s?.meanGain ?? null,
            lastUsed: s?.lastUsed?.toISOString() ?? null,
          };
        });
        writeRows(ctx.stdout, opts.json, rows, ['id', 'kind', 'triggers', 'source', 'asks', 'mean gain', 'last used'], (r) => [
          r.id,
          r.kind,
          r.triggers.join(','),
          r.source,
          String(r.asks),
          formatGain(r.meanGain),
          formatDate(r.lastUsed ? new Date(r.lastUsed) : null),
        ]);
        if (!opts.json) {
          const asked = rows.filter((r) => r.asks > 0).length;
          writeLine(ctx.stdout, `\n${rows.length} questions, ${asked} asked at least once; gain = best speedup after ${k} evaluations / best before (geometric mean).`);
          writeLine(ctx.stdout, `People's questions: ${people.asks} asked, ${people.attributed} attributed, mean gain ${formatGain(people.meanGain)}.`);
        }
        for (const w of loaded.warnings) writeLine(ctx.stderr, `warning: ${w}`);
      });
    });
  registerBankLint(bank, ctx);
  registerBankPromote(bank, ctx);
  registerBankExport(bank, ctx);
}
