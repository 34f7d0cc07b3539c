import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import {
  BANK_FILE_SCHEMA,
  BankEntrySchema,
  BankFileSchema,
  TERMS_FILE_SCHEMA,
  TermsFileSchema,
  type BankEntry,
} from './bank-schema.js';
import { compileTerm, type TermMatcher } from './terms.js';
import { checkQuestionText, normalizeText } from './text-rules.js';
import { lineOf } from './yaml-lines.js';

/** One problem in the bank, precise enough to fix without reading our code. */
export interface BankProblem {
  file: string;
  line: number | undefined;
  /** The entry at fault, when there is one. */
  id?: string;
  message: string;
}

export interface BankLint {
  /** Entries that passed every check, in file order. */
  entries: BankEntry[];
  terms: TermMatcher[];
  files: string[];
  problems: BankProblem[];
}

export function formatBankProblem(p: BankProblem): string {
  return `${p.file}${p.line ? `:${p.line}` : ''}: ${p.id ? `${p.id}: ` : ''}${p.message}`;
}

function formatPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const s of segments) out += typeof s === 'number' ? `[${s}]` : out ? `.${String(s)}` : String(s);
  return out;
}

function zodProblems(error: z.ZodError, file: string, prefix: PropertyKey[], root: unknown, counter: LineCounter, id?: string): BankProblem[] {
  return error.issues.map((issue) => {
    const at = [...prefix, ...issue.path];
    const field = formatPath(issue.path);
    return { file, line: lineOf(root, at, counter), ...(id ? { id } : {}), message: `${field ? `${field}: ` : ''}${issue.message}` };
  });
}

interface ParsedFile {
  file: string;
  root: unknown;
  counter: LineCounter;
  data: unknown;
}

async function parseYamlFile(absolute: string, file: string, problems: BankProblem[]): Promise<ParsedFile | undefined> {
  let text: string;
  try {
    text = await readFile(absolute, 'utf8');
  } catch (error) {
    problems.push({ file, line: undefined, message: `cannot read: ${(error as Error).message}` });
    return undefined;
  }
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: true });
  if (doc.errors.length > 0) {
    for (const e of doc.errors) problems.push({ file, line: e.linePos?.[0]?.line, message: `invalid YAML: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}` });
    return undefined;
  }
  return { file, root: doc.contents, counter, data: doc.toJS() };
}

function collectTerms(f: ParsedFile, seen: Map<string, string>, out: TermMatcher[], problems: BankProblem[]): void {
  const parsed = TermsFileSchema.safeParse(f.data);
  if (!parsed.success) {
    problems.push(...zodProblems(parsed.error, f.file, [], f.root, f.counter));
    return;
  }
  for (const [category, list] of Object.entries(parsed.data.terms)) {
    list.forEach((term, i) => {
      const line = lineOf(f.root, ['terms', category, i], f.counter);
      const key = term.toLowerCase().replace(/[\s-]+/g, ' ');
      const first = seen.get(key);
      if (first) {
        problems.push({ file: f.file, line, message: `term '${term}' is listed twice (first at ${first})` });
        return;
      }
      seen.set(key, `${f.file}:${line ?? '?'}`);
      try {
        out.push(compileTerm(term, category));
      } catch (error) {
        problems.push({ file: f.file, line, message: (error as Error).message });
      }
    });
  }
}

interface Candidate {
  entry: BankEntry;
  file: string;
  idLine: number | undefined;
  textLine: number | undefined;
}

function collectEntries(f: ParsedFile, out: Candidate[], problems: BankProblem[]): void {
  const parsed = BankFileSchema.safeParse(f.data);
  if (!parsed.success) {
    problems.push(...zodProblems(parsed.error, f.file, [], f.root, f.counter));
    return;
  }
  parsed.data.questions.forEach((raw, i) => {
    const rawId = (raw as { id?: unknown } | null)?.id;
    const id = typeof rawId === 'string' ? rawId : undefined;
    const entry = BankEntrySchema.safeParse(raw);
    if (!entry.success) {
      problems.push(...zodProblems(entry.error, f.file, ['questions', i], f.root, f.counter, id));
      return;
    }
    const line = lineOf(f.root, ['questions', i], f.counter);
    out.push({
      entry: { ...entry.data, source: 'seed', location: `${f.file}:${line ?? '?'}` },
      file: f.file,
      idLine: lineOf(f.root, ['questions', i, 'id'], f.counter),
      textLine: lineOf(f.root, ['questions', i, 'text'], f.counter),
    });
  });
}

/**
 * Reads every `*.yaml` in the bank folder (question files and the term list, told apart by their
 * `schema`) and checks each question: the schema, unique ids and texts across files, and the text
 * rules (a question, known placeholders, no listed term, no number of its own).
 */
export async function lintBank(dir: string, options: { cwd?: string } = {}): Promise<BankLint> {
  const cwd = options.cwd ?? process.cwd();
  const shown = (abs: string) => path.relative(cwd, abs) || abs;
  const problems: BankProblem[] = [];
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true }))
      .filter((d) => d.isFile() && /\.ya?ml$/.test(d.name))
      .map((d) => d.name)
      .sort();
  } catch (error) {
    problems.push({ file: shown(dir), line: undefined, message: `cannot read the bank folder: ${(error as Error).message}` });
    return { entries: [], terms: [], files: [], problems };
  }
  const files = names.map((n) => shown(path.join(dir, n)));
  const parsed = await Promise.all(names.map((n, i) => parseYamlFile(path.join(dir, n), files[i]!, problems)));

  const terms: TermMatcher[] = [];
  const seenTerms = new Map<string, string>();
  const candidates: Candidate[] = [];
  let termFiles = 0;
  for (const f of parsed) {
    if (!f) continue;
    const schema = (f.data as { schema?: unknown } | null)?.schema;
    if (schema === TERMS_FILE_SCHEMA) {
      termFiles += 1;
      collectTerms(f, seenTerms, terms, problems);
    }
    else if (schema === BANK_FILE_SCHEMA) collectEntries(f, candidates, problems);
    else {
      problems.push({
        file: f.file,
        line: lineOf(f.root, ['schema'], f.counter),
        message: `schema must be ${BANK_FILE_SCHEMA} (questions) or ${TERMS_FILE_SCHEMA} (the term list), got ${JSON.stringify(schema ?? null)}`,
      });
    }
  }
  // Without the list no text could be checked for information it supplies; that is not a pass.
  if (termFiles === 0 && parsed.every(Boolean)) {
    problems.push({ file: shown(dir), line: undefined, message: `no term list: add a file with schema ${TERMS_FILE_SCHEMA} listing the terms questions must not name` });
  }

  const entries: BankEntry[] = [];
  const byId = new Map<string, BankEntry>();
  const byText = new Map<string, BankEntry>();
  for (const { entry, file, idLine, textLine } of candidates) {
    const before = problems.length;
    const sameId = byId.get(entry.id);
    if (sameId) problems.push({ file, line: idLine, id: entry.id, message: `duplicate id: already defined at ${sameId.location}` });
    const sameText = byText.get(normalizeText(entry.text));
    if (sameText) problems.push({ file, line: textLine, id: entry.id, message: `duplicate text: the same question as ${sameText.id} (${sameText.location})` });
    for (const reason of checkQuestionText(entry.text, entry.placeholders, terms)) {
      problems.push({ file, line: textLine, id: entry.id, message: reason });
    }
    if (!sameId) byId.set(entry.id, entry);
    if (!sameText) byText.set(normalizeText(entry.text), entry);
    if (problems.length === before) entries.push(entry);
  }
  return { entries, terms, files, problems };
}
