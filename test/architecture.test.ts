import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../src/config/index.js';
import { staticPackages } from './support/static-imports.js';

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

const SRC = path.join(REPO_ROOT, 'src');
const rel = (f: string) => path.relative(REPO_ROOT, f);

describe('architecture', () => {
  it('reads process.env only in src/config/', async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles(SRC)) {
      if (rel(file).startsWith(`src${path.sep}config${path.sep}`)) continue;
      const text = await readFile(file, 'utf8');
      if (/process\s*(\.\s*env\b|\[\s*['"`]env['"`]\s*\])|\{\s*env\s*\}\s*=\s*process\b/.test(text)) offenders.push(rel(file));
    }
    expect(offenders).toEqual([]);
  });

  it('keeps vitest out of the benchmarks: `npm run bench` runs them under plain tsx', async () => {
    const bench = path.join(REPO_ROOT, 'bench');
    const offenders: string[] = [];
    for (const file of (await readdir(bench)).filter((f) => f.endsWith('.ts'))) {
      const { packages, files } = await staticPackages(path.join(bench, file));
      if (packages.has('vitest')) offenders.push(`bench/${file} (through ${files.join(', ')})`);
    }
    expect(offenders).toEqual([]);
  });

  it('exits the process only from the CLI entry point', async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles(SRC)) {
      if (rel(file) === path.join('src', 'cli', 'main.ts')) continue;
      const text = await readFile(file, 'utf8');
      if (/process\s*\.\s*(exit|abort|reallyExit|kill\s*\(\s*process\.pid)\b|process\.exitCode\s*=/.test(text)) offenders.push(rel(file));
    }
    expect(offenders).toEqual([]);
  });

  it('keeps slack/ away from agent/ internals (it goes through agent/index.ts)', async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles(path.join(SRC, 'slack')).catch(() => [])) {
      const text = await readFile(file, 'utf8');
      for (const m of text.matchAll(/from\s+['"]([^'"]+)['"]/g)) {
        const target = path.resolve(path.dirname(file), m[1]!);
        const inAgent = target.startsWith(path.join(SRC, 'agent') + path.sep);
        if (inAgent && path.basename(target) !== 'index.js') offenders.push(`${rel(file)} imports ${m[1]}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('keeps harness/ below the other layers: it imports only config/ and core/', async () => {
    // The runner's types once lived in src/queue/dispatcher.ts; an import back up the layers makes
    // the harness depend on what it serves (and on BullMQ's types through it).
    const allowed = ['config', 'core', 'harness'].map((d) => path.join(SRC, d) + path.sep);
    const offenders: string[] = [];
    for (const file of await sourceFiles(path.join(SRC, 'harness'))) {
      const text = await readFile(file, 'utf8');
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.[^'"]*)['"]/g)) {
        const target = path.resolve(path.dirname(file), m[1]!);
        if (!allowed.some((a) => target.startsWith(a))) offenders.push(`${rel(file)} imports ${m[1]}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
