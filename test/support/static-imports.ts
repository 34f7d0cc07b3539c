import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from '../../src/config/index.js';

/** The packages a module pulls in when it is loaded: its static imports, followed through our own files. */
export async function staticPackages(entry: string): Promise<{ packages: Set<string>; files: string[] }> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = await readFile(file, 'utf8');
    // Static imports and re-exports that load code; `import type` / `export type` are erased.
    for (const m of text.matchAll(/^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) queue.push(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
      else packages.add(spec);
    }
  }
  return { packages, files: [...seen].map((f) => path.relative(REPO_ROOT, f)) };
}
