import type { Run, Store } from '../db/index.js';
import { countedBest, fullSetCheckOf, type CountedBest } from '../harness/counted-best.js';

/**
 * Recomputes the run's counted best (src/harness/counted-best.ts: full-set, correct results, and a
 * quick run's end-of-run full-set check) from its evaluations and keeps it in `runs.state.counted`,
 * where the run view reads it. Called after every evaluation and after the full-set check.
 */
export async function recordCountedBest(store: Pick<Store, 'evaluations' | 'agentRuns'>, run: Pick<Run, 'id' | 'state'>): Promise<{ run: Run | undefined; counted: CountedBest | null }> {
  const evaluations = await store.evaluations.forRun(run.id);
  const counted = countedBest(evaluations, { fullSetCheck: fullSetCheckOf((run.state as { confirmation?: unknown } | null)?.confirmation) });
  return { run: await store.agentRuns.patchState(run.id, { counted }), counted };
}
