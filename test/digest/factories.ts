import { tables, type Store } from '../../src/db/index.js';

/** Small factories that write rows with explicit timestamps, so digest windows can be tested exactly. */

type RunInsert = typeof tables.runs.$inferInsert;
type EvaluationInsert = typeof tables.evaluations.$inferInsert;
type StepInsert = typeof tables.agentSteps.$inferInsert;
type QuestionInsert = typeof tables.questions.$inferInsert;

export const at = (iso: string) => new Date(iso);

export async function insertRun(store: Store, run: Partial<RunInsert> & Pick<RunInsert, 'id' | 'task' | 'createdAt'>): Promise<void> {
  await store.db.insert(tables.runs).values({
    owner: 'U0OWNER',
    origin: 'slack',
    status: 'running',
    model: 'claude-test',
    target: 1.1,
    questionTimeoutSeconds: 600,
    budgetEvals: 200,
    budgetSteps: 500,
    budgetUsd: 50,
    budgetSeconds: 86400,
    arch: 'sm_90',
    ...run,
  });
}

let hashes = 0;

/**
 * A finished evaluation. `peer` writes the harness's `summary.best_peer` into the result blob, as the
 * gpu-worker stores it.
 */
export async function insertEvaluation(
  store: Store,
  e: Partial<EvaluationInsert> & Pick<EvaluationInsert, 'task' | 'status'> & { peer?: string },
): Promise<number> {
  const { peer, ...row } = e;
  hashes += 1;
  const [inserted] = await store.db
    .insert(tables.evaluations)
    .values({
      candidateHash: `hash-${hashes}`,
      source: '// kernel',
      arch: 'sm_90',
      result: peer ? { schema: 'kernelseek.eval/1', summary: { best_peer: peer } } : null,
      ...row,
    })
    .returning({ id: tables.evaluations.id });
  return inserted!.id;
}

let stepSeq = 0;

export async function insertStep(store: Store, s: Partial<StepInsert> & Pick<StepInsert, 'runId' | 'createdAt' | 'costUsd'>): Promise<void> {
  stepSeq += 1;
  await store.db.insert(tables.agentSteps).values({ seq: stepSeq, model: 'claude-test', request: {}, ...s });
}

export async function insertQuestion(
  store: Store,
  q: Partial<QuestionInsert> & Pick<QuestionInsert, 'runId' | 'source' | 'createdAt'>,
): Promise<number> {
  const [inserted] = await store.db
    .insert(tables.questions)
    .values({ text: 'What limits this kernel now?', author: q.source === 'bank' ? 'bank' : 'U0ASKER', deliveredAt: q.createdAt, ...q })
    .returning({ id: tables.questions.id });
  return inserted!.id;
}
