import { isMap, isSeq, type LineCounter, type Node as YamlNode } from 'yaml';

/**
 * The 1-based line of the YAML node at `segments` (keys and sequence indexes), or of the closest
 * ancestor that exists, so a problem always points somewhere a person can look.
 */
export function lineOf(root: unknown, segments: readonly PropertyKey[], counter: LineCounter): number | undefined {
  let node: unknown = root;
  const start = (n: unknown) => {
    const range = (n as YamlNode | null | undefined)?.range;
    return range ? counter.linePos(range[0]).line : undefined;
  };
  let best = start(root);
  for (const seg of segments) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === seg);
      if (!pair) break;
      best = start(pair.key) ?? best;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      node = node.items[seg];
      best = start(node) ?? best;
    } else break;
  }
  return best;
}
