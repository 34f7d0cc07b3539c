/**
 * Matching the maintained term list against question text. A term matches case-insensitively and only
 * as whole words, so `tile` flags "tiles" but not "versatile", and `L2` flags "the L2" but not "L20".
 *
 * Term syntax (questions/terms.yaml):
 * - a space or hyphen inside a term matches any run of spaces or hyphens ("shared memory" also finds
 *   "shared-memory");
 * - a plain term also matches its plural ("warp" finds "warps");
 * - a trailing `*` matches any continuation of the word ("vectori*" finds "vectorize", "vectorised").
 */

export interface TermMatcher {
  term: string;
  category: string;
  pattern: RegExp;
}

export interface TermHit {
  term: string;
  category: string;
  /** The text as written in the question. */
  found: string;
}

const WORD = 'A-Za-z0-9_';

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Compiles one term; throws on a term that could never match a word (e.g. only punctuation). */
export function compileTerm(term: string, category: string): TermMatcher {
  const trimmed = term.trim();
  const open = trimmed.endsWith('*');
  const core = open ? trimmed.slice(0, -1) : trimmed;
  if (!/[A-Za-z0-9]/.test(core)) throw new Error(`term '${term}' has no letters or digits`);
  const body = core
    .split(/[\s-]+/)
    .filter(Boolean)
    .map(escapeRegExp)
    .join('[\\s-]+');
  const tail = open ? `[${WORD}]*` : '(?:e?s)?';
  // Lookarounds instead of \b: terms may begin or end with punctuation (`cp.async`, `__syncthreads`).
  const pattern = new RegExp(`(?<![${WORD}])${body}${tail}(?![${WORD}])`, 'i');
  return { term: trimmed, category, pattern };
}

export function compileTerms(terms: Record<string, string[]>): TermMatcher[] {
  return Object.entries(terms).flatMap(([category, list]) => list.map((t) => compileTerm(t, category)));
}

/** Every term of the list that occurs in `text`, in list order. */
export function findTerms(text: string, matchers: readonly TermMatcher[]): TermHit[] {
  const hits: TermHit[] = [];
  for (const m of matchers) {
    const found = m.pattern.exec(text);
    if (found) hits.push({ term: m.term, category: m.category, found: found[0] });
  }
  return hits;
}
