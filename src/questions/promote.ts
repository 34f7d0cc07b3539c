import type { Store } from '../db/index.js';
import { UserInputError } from '../core/errors.js';
import { createBankAttributionRepository } from '../db/repositories/bank-attribution.js';
import { BankIdSchema, KINDS, TRIGGERS, type BankEntry, type QuestionKind, type Trigger } from './bank-schema.js';
import { loadBank } from './load.js';
import { checkQuestionText, normalizeText, placeholdersIn } from './text-rules.js';

export interface PromoteOptions {
  /** The bank id; made from the question's words when absent. */
  id?: string;
  kind: string;
  triggers: readonly string[];
  /** Who promoted it (a Slack user id, a login name). */
  by: string;
  /** A cleaned-up wording of the person's question; the original stays on its `questions` row. */
  text?: string;
  /** The shipped bank's folder (default: questions/ in this checkout): its term list applies, and its ids and texts must not be repeated. */
  dir?: string;
}

const STOP_WORDS = new Set(['a', 'an', 'and', 'are', 'at', 'be', 'do', 'does', 'for', 'in', 'is', 'it', 'of', 'on', 'or', 'the', 'this', 'that', 'to', 'what', 'why', 'you', 'your', 'how', 'which', 'would', 'have', 'has']);

/** A readable id from the question's first content words (`promoted-time-slowest-scenario`). */
export function slugFromText(text: string): string {
  const words = text
    .toLowerCase()
    .replace(/\{[^{}]*\}/g, ' ')
    .split(/[^a-z]+/)
    .filter((w) => w.length > 1 && !STOP_WORDS.has(w))
    .slice(0, 4);
  return ['promoted', ...words].join('-').slice(0, 56).replace(/-+$/, '');
}

function parseKind(kind: string): QuestionKind {
  if ((KINDS as readonly string[]).includes(kind)) return kind as QuestionKind;
  throw new UserInputError(`Unknown kind '${kind}'. Use one of: ${KINDS.join(', ')}.`, { code: 'bank_kind' });
}

function parseTriggers(triggers: readonly string[]): Trigger[] {
  const list = [...new Set(triggers.map((t) => t.trim()).filter(Boolean))];
  const unknown = list.filter((t) => !(TRIGGERS as readonly string[]).includes(t));
  if (list.length === 0 || unknown.length > 0) {
    const what = list.length === 0 ? 'No triggers given' : `Unknown trigger(s) ${unknown.map((t) => `'${t}'`).join(', ')}`;
    throw new UserInputError(`${what}. Use one or more of: ${TRIGGERS.join(', ')}.`, { code: 'bank_trigger' });
  }
  return list as Trigger[];
}

/**
 * Adds a person's question to the bank (table bank_entries, source `promoted`), after the same checks
 * the shipped bank passes. Every refusal says what to change; nothing is written unless all pass.
 */
export async function promoteQuestion(store: Store, questionId: number, options: PromoteOptions): Promise<BankEntry> {
  const kind = parseKind(options.kind);
  const triggers = parseTriggers(options.triggers);
  const question = await store.questions.get(questionId);
  if (!question) throw new UserInputError(`No question with id ${questionId}. 'kernelseek trace <run>' lists a run's questions with their ids.`, { code: 'question_unknown' });
  if (question.source !== 'human') {
    throw new UserInputError(`Question ${questionId} came from the bank (${question.bankId ?? 'unknown id'}); only a person's question can be promoted.`, { code: 'bank_not_human' });
  }
  const repo = createBankAttributionRepository(store.db);
  const already = await repo.entryFromQuestion(questionId);
  if (already) throw new UserInputError(`Question ${questionId} was already promoted as '${already.id}'.`, { code: 'bank_already_promoted' });

  const text = (options.text ?? question.text).trim().replace(/\s+/g, ' ');
  // The shipped bank must be sound to join it: loadBank refuses a broken one, term list included.
  const bank = await loadBank({ ...(options.dir ? { dir: options.dir } : {}), store });
  const reasons = checkQuestionText(text, placeholdersIn(text), bank.terms);
  const sameText = bank.entries.find((e) => normalizeText(e.text) === normalizeText(text));
  if (sameText) reasons.push(`the bank already asks this question as ${sameText.id}`);
  if (reasons.length > 0) {
    throw new UserInputError(
      `Question ${questionId} cannot join the bank as written:\n${reasons.map((r) => `  - ${r}`).join('\n')}\nRephrase it with --text if the idea is worth keeping.`,
      { code: 'bank_rejected' },
    );
  }

  const taken = (id: string) => bank.entries.some((e) => e.id === id);
  let id: string;
  if (options.id !== undefined) {
    const parsed = BankIdSchema.safeParse(options.id);
    if (!parsed.success) throw new UserInputError(`Bank id '${options.id}' ${parsed.error.issues[0]!.message}.`, { code: 'bank_id' });
    id = parsed.data;
  } else {
    const base = slugFromText(text);
    id = base;
    for (let n = 2; taken(id) || (await store.bank.get(id)); n += 1) id = `${base}-${n}`;
  }
  const entry = { id, text, kind, triggers, placeholders: placeholdersIn(text), source: 'promoted' as const, originQuestionId: questionId, promotedBy: options.by };
  if (taken(id) || !(await repo.insertEntry(entry))) {
    throw new UserInputError(`Bank id '${id}' is already taken; choose another with --id.`, { code: 'bank_id_taken' });
  }
  return {
    id,
    kind,
    triggers,
    text,
    placeholders: entry.placeholders,
    source: 'promoted',
    origin: { question: questionId, run: question.runId, by: options.by, author: question.author },
    location: 'database',
  };
}
