import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { EvaluationRecord } from '../../src/questions/index.js';
import type { BankEntry } from '../../src/questions/index.js';
import { createTempDir } from '../support/db.js';

/** A small term list for tests: one term of each matching form. */
export const TEST_TERMS = `schema: kernelseek.terms/1
terms:
  memory_spaces:
    - shared memory
    - register*
  techniques:
    - tile
    - vectori*
  instructions:
    - cp.async
`;

/** Writes `files` (name → YAML text) into a fresh folder; returns it and its remover. */
export async function makeBankDir(files: Record<string, string>): Promise<{ dir: string; remove(): Promise<void> }> {
  const tmp = await createTempDir('ks-bank-');
  await mkdir(tmp.dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(tmp.dir, name), text);
  return tmp;
}

export function entry(overrides: Partial<BankEntry> & { id: string }): BankEntry {
  return {
    kind: 'layer_shift',
    triggers: ['plateau'],
    text: `What about ${overrides.id}?`,
    placeholders: [],
    source: 'seed',
    location: 'test',
    ...overrides,
  };
}

interface ScenarioSpec {
  id: string;
  time: number;
  baseline?: number;
  peer?: number;
  pct?: number;
}

/** A kernelseek.eval/1 result with the given per-scenario times. */
export function evalResult(scenarios: ScenarioSpec[], summary: { pctMedian?: number | null; bestPeer?: string | null } = {}): Record<string, unknown> {
  return {
    schema: 'kernelseek.eval/1',
    task: 'fixture',
    device: 'cuda',
    gpu: 'NVIDIA H200',
    arch: 'sm_90',
    status: 'ok',
    correct: true,
    summary: {
      scenarios: scenarios.length,
      correct: scenarios.length,
      speedup_vs_baseline_geomean: 1,
      speedup_vs_peer_geomean: { cudnn: 0.5 },
      best_peer: summary.bestPeer === undefined ? 'cudnn' : summary.bestPeer,
      pct_of_peak_median: summary.pctMedian ?? null,
      seconds: 1,
    },
    scenarios: scenarios.map((s) => ({
      id: s.id,
      params: {},
      correct: true,
      time_ms: s.time,
      baseline_ms: s.baseline ?? s.time,
      peer_ms: s.peer === undefined ? {} : { cudnn: s.peer },
      tflops: null,
      pct_of_peak: s.pct ?? null,
    })),
    compile: { seconds: 1, log: '' },
    messages: [],
  };
}

/** One evaluation row: `ok` with a speedup, or a failure status. */
export function ev(seq: number, outcome: number | 'incorrect' | 'compile_error' | 'pending' | 'timeout', extra: Partial<EvaluationRecord> = {}): EvaluationRecord {
  if (typeof outcome === 'number') {
    return { seq, status: 'ok', correct: true, scenarios: 'all', speedupVsBaseline: outcome, speedupVsBestPeer: outcome / 2, result: null, ...extra };
  }
  return { seq, status: outcome, correct: outcome === 'pending' ? null : false, scenarios: 'all', speedupVsBaseline: null, speedupVsBestPeer: null, result: null, ...extra };
}
