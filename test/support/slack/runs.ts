import type { Run, Store } from '../../../src/db/index.js';
import { describeRun, type EvaluationReport, type RunView } from '../../../src/slack/agent-port.js';

/**
 * Small factories for runs and evaluations as the store holds them, and the view the agent
 * reports for them (the agent's own describeRun).
 */

let counter = 0;

export async function createStoredRun(store: Store, fields: Partial<Parameters<Store['runs']['create']>[0]> = {}): Promise<Run> {
  counter += 1;
  return store.runs.create({
    id: fields.id ?? `ks-test${String(counter).padStart(4, '0')}`,
    task: 'cpu_softmax',
    owner: 'UOWNER01',
    origin: 'slack',
    model: 'claude-sonnet-4-5',
    target: 1.1,
    questionTimeoutSeconds: 600,
    budgetEvals: 50,
    budgetSteps: 200,
    budgetUsd: 25,
    budgetSeconds: 4 * 3600,
    ...fields,
  });
}

/** The view the agent reports for a stored run, with `patch` applied (a state the test wants to show). */
export function viewOf(run: Run, patch: Partial<RunView> = {}): RunView {
  return { ...describeRun(run), ...patch };
}

/** Stores a finished evaluation of `source` with the given speedup (null: the candidate failed). */
export async function storeEvaluation(
  store: Store,
  runId: string,
  seq: number,
  speedup: number | null,
  source = `// candidate ${seq}\n`,
): Promise<EvaluationReport> {
  const row = await store.evaluations.createPending({ runId, seq, task: 'cpu_softmax', candidateHash: `h${seq}`, source, jobId: `eval:${runId}:${seq}` });
  const correct = speedup !== null;
  await store.evaluations.complete(row.id, {
    status: correct ? 'ok' : 'incorrect',
    correct,
    speedupVsBaseline: speedup,
    speedupVsBestPeer: speedup === null ? null : speedup * 0.8,
    result: { summary: { scenarios: 12, correct: correct ? 12 : 7, best_peer: 'torch' } },
    gpu: null,
    arch: null,
    worker: 'test/0',
    harnessSeconds: 1.5,
    startedAt: new Date(),
  });
  if (correct) await store.runs.offerBest(runId, row.id, speedup, speedup * 0.8);
  return {
    id: row.id,
    seq,
    status: correct ? 'ok' : 'incorrect',
    correct,
    scenarios: { total: 12, correct: correct ? 12 : 7 },
    speedupVsBaseline: speedup,
    speedupVsBestPeer: speedup === null ? null : speedup * 0.8,
    bestPeer: 'torch',
    commit: `c0ffee${seq}`.padEnd(40, '0'),
    headline: `eval #${seq}`,
  };
}
