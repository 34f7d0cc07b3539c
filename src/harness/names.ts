import levenshtein from 'damerau-levenshtein';

/**
 * Names close to `name` among `names`, closest first: a typo (one or two edits, at most a third of
 * the name) or a name that contains the other. For "did you mean".
 */
export function closestNames(name: string, names: readonly string[]): string[] {
  const scored = names
    .filter((n) => n !== name)
    .map((n) => ({ n, d: levenshtein(name.toLowerCase(), n.toLowerCase()).steps }))
    .filter(({ n, d }) => d <= Math.max(1, Math.min(2, Math.floor(Math.max(name.length, n.length) / 3))) || (name.length >= 4 && (n.includes(name) || name.includes(n))));
  return scored.sort((a, b) => a.d - b.d || a.n.localeCompare(b.n)).map(({ n }) => n);
}
