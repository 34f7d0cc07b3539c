import type { Store } from '../../db/index.js';
import { failureOf, type EvaluationReport } from '../agent-port.js';
import type { CardExtras } from '../views/status-card.js';

/**
 * What a status card shows beyond the run view (the latest evaluation, the strongest peer's name),
 * remembered per run in this process and rebuilt from the store after a restart — a run's turns may
 * be processed by different workers.
 */
export interface RunExtrasCache {
  get(runId: string): Promise<CardExtras>;
  noteEvaluation(runId: string, evaluation: EvaluationReport): void;
  noteBestPeer(runId: string, peer: string | null): void;
  /** What the run does now (`thinking`, `eval #4: timing 3/11`), or null; returns whether it changed. */
  noteNow(runId: string, now: string | null): boolean;
  forget(runId: string): void;
}

function bestPeerOf(result: Record<string, unknown> | null): string | null {
  const summary = (result as { summary?: { best_peer?: unknown } } | null)?.summary;
  return typeof summary?.best_peer === 'string' ? summary.best_peer : null;
}

export function createRunExtrasCache(store: Store, maxRuns = 500): RunExtrasCache {
  const cache = new Map<string, CardExtras>();
  const remember = (runId: string, extras: CardExtras) => {
    cache.delete(runId);
    cache.set(runId, extras);
    if (cache.size > maxRuns) cache.delete(cache.keys().next().value!);
    return extras;
  };
  return {
    async get(runId) {
      const hit = cache.get(runId);
      if (hit) return hit;
      const [run, evaluations] = await Promise.all([store.runs.get(runId), store.evaluations.forRun(runId)]);
      const done = evaluations.filter((e) => e.status !== 'pending');
      const last = done.at(-1);
      const best = run?.bestEvaluationId != null ? evaluations.find((e) => e.id === run.bestEvaluationId) : undefined;
      const scenarios = (e: (typeof evaluations)[number]) => {
        const s = (e.result as { summary?: { scenarios?: number; correct?: number } } | null)?.summary;
        return { total: Number(s?.scenarios ?? 0), correct: Number(s?.correct ?? 0) };
      };
      return remember(runId, {
        lastEvaluation:
          last && last.seq != null ? { seq: last.seq, status: last.status, correct: last.correct === true, scenarios: scenarios(last), scenarioSet: last.scenarios, failure: failureOf(last) } : undefined,
        bestPeer: best ? bestPeerOf(best.result) : null,
      });
    },
    noteEvaluation(runId, evaluation) {
      const prev = cache.get(runId) ?? {};
      remember(runId, { ...prev, lastEvaluation: evaluation });
    },
    noteNow(runId, now) {
      const prev = cache.get(runId) ?? {};
      if ((prev.now ?? null) === now) return false;
      remember(runId, { ...prev, now });
      return true;
    },
    noteBestPeer(runId, peer) {
      const prev = cache.get(runId) ?? {};
      remember(runId, { ...prev, bestPeer: peer });
    },
    forget: (runId) => void cache.delete(runId),
  };
}
