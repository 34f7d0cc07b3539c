import path from 'node:path';
import type { BankEntryRow, Store } from '../db/index.js';
import { REPO_ROOT } from '../config/index.js';
import { UserInputError } from '../core/errors.js';
import { KindSchema, TriggerSchema, type BankEntry } from './bank-schema.js';
import { formatBankProblem, lintBank } from './lint.js';
import type { TermMatcher } from './terms.js';
import { checkQuestionText, normalizeText } from './text-rules.js';

/** The shipped bank's folder in a checkout. */
export function defaultBankDir(repoRoot: string): string {
  return path.join(repoRoot, 'questions');
}

export interface Bank {
  entries: BankEntry[];
  terms: TermMatcher[];
  /** Promoted entries left out, and why (they broke a rule added since, or clash with a shipped id). */
  warnings: string[];
}

/** A promoted database row as a bank entry, or the reasons it cannot be one. */
export function entryFromRow(row: BankEntryRow, terms: readonly TermMatcher[]): { entry?: BankEntry; reasons: string[] } {
  const kind = KindSchema.safeParse(row.kind);
  const triggers = TriggerSchema.array().min(1).safeParse(row.triggers);
  const reasons = [
    ...(kind.success ? [] : [`unknown kind '${row.kind}'`]),
    ...(triggers.success ? [] : [`invalid triggers ${JSON.stringify(row.triggers)}`]),
    ...checkQuestionText(row.text, row.placeholders, terms),
  ];
  if (!kind.success || !triggers.success || reasons.length > 0) return { reasons };
  const origin = {
    ...(row.originQuestionId != null ? { question: row.originQuestionId } : {}),
    ...(row.promotedBy ? { by: row.promotedBy } : {}),
  };
  return {
    entry: {
      id: row.id,
      kind: kind.data,
      triggers: triggers.data,
      text: row.text,
      placeholders: row.placeholders,
      source: row.source,
      ...(Object.keys(origin).length > 0 ? { origin } : {}),
      location: 'database',
    },
    reasons: [],
  };
}

/**
 * Loads the bank the agent asks from: the shipped YAML (which must lint clean; a broken bank is an
 * error to fix, not something to run with) plus the entries promoted into the database. A promoted
 * entry that has since been exported into the YAML is the same question and appears once.
 */
export async function loadBank(options: { dir?: string; store?: Store; cwd?: string } = {}): Promise<Bank> {
  const dir = options.dir ?? defaultBankDir(REPO_ROOT);
  const lint = await lintBank(dir, options.cwd ? { cwd: options.cwd } : {});
  if (lint.problems.length > 0) {
    throw new UserInputError(
      `The question bank in ${dir} has ${lint.problems.length} problem(s):\n${lint.problems.map((p) => `  ${formatBankProblem(p)}`).join('\n')}\nRun 'kernelseek bank lint' after fixing them.`,
      { code: 'bank_invalid' },
    );
  }
  const entries = [...lint.entries];
  const warnings: string[] = [];
  if (options.store) {
    const byId = new Map(entries.map((e) => [e.id, e]));
    for (const row of await options.store.bank.active()) {
      const shipped = byId.get(row.id);
      if (shipped) {
        if (normalizeText(shipped.text) !== normalizeText(row.text)) {
          warnings.push(`promoted entry ${row.id} is left out: the shipped bank defines a different question with that id (${shipped.location})`);
        }
        continue;
      }
      const { entry, reasons } = entryFromRow(row, lint.terms);
      if (entry) {
        entries.push(entry);
        byId.set(entry.id, entry);
      } else {
        warnings.push(`promoted entry ${row.id} is left out: ${reasons.join('; ')}`);
      }
    }
  }
  return { entries, terms: lint.terms, warnings };
}
