import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * What a server and its workers must agree on before a job goes from one to the other: the
 * package's version and a digest of every file of the harness (`harness/`), the code that compiles,
 * checks and times a candidate. Two checkouts whose harness differs in one byte get different
 * versions, so a worker never evaluates a run's candidates with another harness than its server's.
 *
 * The digest is generic on purpose: every file under `harness/` counts, whatever its name or
 * folder, so moving the harness's modules into packages changes the version without changing this
 * code. Only what git ignores there (bytecode, pytest's cache) is left out, so a checkout that has
 * run the harness has the same version as a fresh clone or a container image.
 */
export interface HarnessVersion {
  /** `0.1.0+3f2a9c01b7de`: the package version and the first 12 hex digits of the digest. */
  version: string;
  /** The 12 hex digits alone: what the per-version queue names carry. */
  id: string;
  /** How many files the digest covers (shown by `kernelseek doctor`). */
  files: number;
}

/** Names under harness/ that the checkout's .gitignore leaves out: never part of the version. */
const IGNORED_DIRS = new Set(['__pycache__', '.pytest_cache']);
const IGNORED_FILE = /\.py[co]$/;

/** Every file under `dir` that counts, as paths relative to it with `/`, sorted. */
export async function listCountedFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(path.join(dir, rel), { withFileTypes: true });
    for (const e of entries) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!IGNORED_DIRS.has(e.name)) await walk(child);
      } else if ((e.isFile() || e.isSymbolicLink()) && !IGNORED_FILE.test(e.name)) {
        out.push(child);
      }
    }
  };
  await walk('');
  return out.sort();
}

/** sha256 over the files' relative paths and contents (hex). */
export async function digestFiles(dir: string, files: string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const rel of files) {
    const content = await readFile(path.join(dir, rel));
    hash.update(`${rel}\0${createHash('sha256').update(content).digest('hex')}\n`);
  }
  return hash.digest('hex');
}

const cache = new Map<string, Promise<HarnessVersion>>();

/**
 * The harness version of the checkout at `repoRoot` (its package.json and harness/). Computed once
 * per process and checkout: the files of a running service's checkout do not change under it (an
 * upgrade restarts it).
 */
export function computeHarnessVersion(repoRoot: string): Promise<HarnessVersion> {
  let hit = cache.get(repoRoot);
  if (!hit) {
    hit = (async () => {
      const pkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { version?: string };
      const dir = path.join(repoRoot, 'harness');
      const files = await listCountedFiles(dir);
      const digest = await digestFiles(dir, files);
      // The package version goes into the id too: the worker's TypeScript side (payloads, runner)
      // is part of what must match, and a release bumps it.
      const id = createHash('sha256').update(`${pkg.version ?? '0.0.0'}\n${digest}`).digest('hex').slice(0, 12);
      return { version: `${pkg.version ?? '0.0.0'}+${id}`, id, files: files.length };
    })();
    cache.set(repoRoot, hit);
    hit.catch(() => cache.delete(repoRoot));
  }
  return hit;
}
