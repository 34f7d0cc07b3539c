import { stringify } from 'yaml';
import type { Store } from '../db/index.js';
import { BANK_FILE_SCHEMA, type BankEntry } from './bank-schema.js';
import { loadBank } from './load.js';

/**
 * The bank as a YAML question file (schema kernelseek.bank/1) that `kernelseek bank lint` accepts:
 * by default the promoted entries only, with where they came from, ready to commit under questions/.
 */
export async function exportBankYaml(store: Store, options: { dir?: string; includeShipped?: boolean; now?: Date } = {}): Promise<{ yaml: string; count: number }> {
  const bank = await loadBank({ ...(options.dir ? { dir: options.dir } : {}), store });
  const chosen = bank.entries.filter((e) => options.includeShipped || e.location === 'database');
  const questions = await Promise.all(chosen.map((e) => toYamlEntry(store, e)));
  const when = (options.now ?? new Date()).toISOString();
  const what = options.includeShipped ? 'every bank question' : 'the questions promoted into the database';
  const header = `# Exported by 'kernelseek bank export' at ${when}: ${what} (${questions.length}).\n`;
  return { yaml: header + stringify({ schema: BANK_FILE_SCHEMA, questions }, { lineWidth: 0 }), count: questions.length };
}

async function toYamlEntry(store: Store, e: BankEntry): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { id: e.id, kind: e.kind, triggers: e.triggers, text: e.text };
  if (e.placeholders.length > 0) out.placeholders = e.placeholders;
  if (e.origin) {
    const question = e.origin.question !== undefined ? await store.questions.get(e.origin.question) : undefined;
    out.origin = {
      ...e.origin,
      ...(question ? { run: question.runId, author: question.author } : {}),
    };
  }
  return out;
}
