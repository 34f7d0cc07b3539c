import { execa } from 'execa';
import { HarnessError } from '../core/errors.js';

/** Tried in order when KERNELSEEK_PYTHON is unset: a virtualenv's python3 first, then the system's. */
export const PYTHON_CANDIDATES = ['python3', '/usr/bin/python3'] as const;

// Imports yaml and locates torch without importing it: importing torch takes seconds, and this
// probe runs once per command. torch's version is read from its version.py.
const PROBE = String.raw`
import importlib.util, os, re, sys, yaml
spec = importlib.util.find_spec("torch")
if spec is None or not spec.origin:
    raise SystemExit("ModuleNotFoundError: No module named 'torch'")
v = "unknown"
try:
    m = re.search(r"__version__\s*=\s*.([^'\x22]+)", open(os.path.join(os.path.dirname(spec.origin), "version.py")).read())
    v = m.group(1) if m else v
except OSError:
    pass
sys.stdout.write(v)
`;

export interface ResolvedPython {
  path: string;
  torchVersion: string;
}

// Keyed by the candidates and PATH: the answer depends on both, and probing imports torch (seconds).
const cache = new Map<string, Promise<ResolvedPython>>();

async function probe(python: string, env: Record<string, string>): Promise<{ ok: true; torch: string } | { ok: false; why: string }> {
  const r = await execa(python, ['-c', PROBE], { env, extendEnv: false, reject: false, timeout: 120_000, stdin: 'ignore' });
  if (r.exitCode === 0) return { ok: true, torch: String(r.stdout).trim() };
  if ((r as { code?: string }).code === 'ENOENT') return { ok: false, why: 'not found' };
  const lastLine = String(r.stderr).trim().split('\n').pop() ?? '';
  return { ok: false, why: r.timedOut ? 'did not answer within 120 s' : lastLine || `exit status ${r.exitCode}` };
}

/**
 * The interpreter that runs the harness: the configured one, else the first candidate that has
 * torch and PyYAML. The answer is cached for the life of the process.
 */
export function resolvePython(configured: string | undefined, env: Record<string, string>): Promise<ResolvedPython> {
  const candidates = configured ? [configured] : [...PYTHON_CANDIDATES];
  const key = `${candidates.join('\0')}\0${env.PATH ?? ''}`;
  let hit = cache.get(key);
  if (!hit) {
    hit = (async () => {
      const tried: string[] = [];
      for (const python of candidates) {
        const r = await probe(python, env);
        if (r.ok) return { path: python, torchVersion: r.torch };
        tried.push(`${python}: ${r.why}`);
      }
      const fix = configured
        ? 'KERNELSEEK_PYTHON must name a Python that can `import torch, yaml`.'
        : 'Install PyTorch and PyYAML for one of them, or set KERNELSEEK_PYTHON to a Python that has both.';
      throw new HarnessError(`No Python interpreter with torch and PyYAML was found (${tried.join('; ')}). ${fix}`, { code: 'harness_python' });
    })();
    cache.set(key, hit);
    // A failed probe is not cached: the person may install torch and try again in the same process.
    hit.catch(() => cache.delete(key));
  }
  return hit;
}

/** The harness's version as the trusted checkout declares it (recorded with every result). */
export async function readHarnessVersion(python: string, repoRoot: string, env: Record<string, string>): Promise<string | null> {
  const r = await execa(python, ['-c', 'import sys, harness; sys.stdout.write(harness.HARNESS_VERSION)'], {
    cwd: repoRoot,
    env: { ...env, PYTHONDONTWRITEBYTECODE: '1' },
    extendEnv: false,
    reject: false,
    timeout: 60_000,
    stdin: 'ignore',
  });
  return r.exitCode === 0 && String(r.stdout).trim() ? String(r.stdout).trim() : null;
}
