import { EVIDENCE_NAMES, isEvidenceName } from './evidence.js';
import { findTerms, type TermMatcher } from './terms.js';

/**
 * The rules every bank question's text obeys, whoever wrote it. They encode DESIGN §1: a question
 * directs by asking, never by supplying information. So the text asks; it may state measured evidence
 * (through placeholders) but nothing else; it names no technique, instruction, library or hardware
 * feature; and it states no number of its own.
 */

export const MAX_TEXT_LENGTH = 400;
const PLACEHOLDER = /\{([^{}]*)\}/g;

/** The placeholder names a text uses, in order of first use. */
export function placeholdersIn(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) {
    const name = m[1]!.trim();
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/** Text as compared for duplicates: case, spacing and punctuation do not make a question new. */
export function normalizeText(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9{}_\s]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.?!])\s+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function quote(s: string): string {
  return s.length > 60 ? `"${s.slice(0, 57)}..."` : `"${s}"`;
}

/** Every reason the text is not a valid bank question (empty when it is). */
export function checkQuestionText(text: string, declared: readonly string[], terms: readonly TermMatcher[]): string[] {
  const reasons: string[] = [];
  const used = placeholdersIn(text);

  for (const name of used) {
    if (!isEvidenceName(name)) {
      reasons.push(`unknown placeholder {${name}}; known placeholders: ${EVIDENCE_NAMES.join(', ')}`);
    } else if (!declared.includes(name)) {
      reasons.push(`placeholder {${name}} is used in the text but not listed in placeholders`);
    }
  }
  for (const name of declared) {
    if (!isEvidenceName(name)) {
      if (!used.includes(name)) reasons.push(`unknown placeholder ${name} in placeholders; known placeholders: ${EVIDENCE_NAMES.join(', ')}`);
    } else if (!used.includes(name)) {
      reasons.push(`placeholder ${name} is listed but the text never uses {${name}}`);
    }
  }

  const bare = text.replace(PLACEHOLDER, 'X');
  if (/[{}]/.test(bare)) reasons.push('has an unmatched brace; placeholders are written {name}');
  if (/\d/.test(bare)) {
    reasons.push('states a number; figures must come from measured evidence through a placeholder such as {pct_of_peak}');
  }
  if (text.length > MAX_TEXT_LENGTH) reasons.push(`is ${text.length} characters long; keep a question under ${MAX_TEXT_LENGTH}`);
  if (bare.split(/\s+/).filter(Boolean).length < 4) reasons.push('is too short to be a question (fewer than four words)');

  if (!text.trim().endsWith('?')) {
    reasons.push("is not a question: it must end with '?'");
  }
  for (const sentence of sentencesOf(text)) {
    if (sentence.endsWith('?')) continue;
    if (placeholdersIn(sentence).length > 0 && !sentence.endsWith('!')) continue;
    if (sentence === text.trim() && !text.trim().endsWith('?')) continue; // already reported above
    reasons.push(`${quote(sentence)} is a statement: only measured evidence (a placeholder) may be stated, everything else must be asked`);
  }

  for (const hit of findTerms(text, terms)) {
    reasons.push(
      `names "${hit.found}" (term '${hit.term}', ${hit.category}): a bank question must not supply a technique, instruction, library or hardware feature`,
    );
  }
  return reasons;
}
