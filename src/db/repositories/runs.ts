import { and, asc, desc, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import { newRunId } from '../../core/ids.js';
import type { Database } from '../client.js';
import { allowedSources, canReopen, isTerminal, type RunStatus } from '../run-status.js';
import { runs } from '../schema.js';

export type Run = typeof runs.$inferSelect;
export type NewRun = Omit<typeof runs.$inferInsert, 'id' | 'status'> & { id?: string };

export interface UsageDelta {
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export function createRunRepository(db: Database) {
  return {
    async create(input: NewRun): Promise<Run> {
      const [row] = await db
        .insert(runs)
        .values({ ...input, id: input.id ?? newRunId(), status: 'queued' })
        .returning();
      return row!;
    },

    async get(id: string): Promise<Run | undefined> {
      const [row] = await db.select().from(runs).where(eq(runs.id, id));
      return row;
    },

    async findByThread(channel: string, threadTs: string): Promise<Run | undefined> {
      const [row] = await db
        .select()
        .from(runs)
        .where(and(eq(runs.slackChannel, channel), eq(runs.slackThreadTs, threadTs)));
      return row;
    },

    async list(options: { statuses?: RunStatus[]; limit?: number } = {}): Promise<Run[]> {
      const query = db.select().from(runs);
      const filtered = options.statuses?.length ? query.where(inArray(runs.status, options.statuses)) : query;
      return filtered.orderBy(desc(runs.createdAt)).limit(options.limit ?? 50);
    },

    /** Runs that continue or fork `runId` (its children), oldest first. */
    async childrenOf(runId: string): Promise<Run[]> {
      return db.select().from(runs).where(eq(runs.parentRunId, runId)).orderBy(asc(runs.createdAt));
    },

    /** A person's runs, newest first. */
    async listByOwner(owner: string, limit = 20): Promise<Run[]> {
      return db.select().from(runs).where(eq(runs.owner, owner)).orderBy(desc(runs.createdAt)).limit(limit);
    },

    /** Per task and architecture, the run with the best speedup vs the baseline (the team's bests). */
    async bestPerTask(limit = 50): Promise<Run[]> {
      const rows = await db
        .selectDistinctOn([runs.task, runs.arch])
        .from(runs)
        .where(isNotNull(runs.bestSpeedup))
        .orderBy(runs.task, runs.arch, desc(runs.bestSpeedup), asc(runs.createdAt))
        .limit(limit);
      return rows;
    },

    /**
     * Moves a run to `to` if, and only if, it is in a state from which that move is legal.
     * Returns the updated run, or undefined when another process moved it first or the move is illegal.
     */
    async transition(
      id: string,
      to: RunStatus,
      patch: Partial<Pick<Run, 'endReason' | 'error'>> = {},
      statePatch?: Record<string, unknown>,
    ): Promise<Run | undefined> {
      const now = new Date();
      const [row] = await db
        .update(runs)
        .set({
          status: to,
          updatedAt: now,
          ...(to === 'running' ? { startedAt: sql`coalesce(${runs.startedAt}, now())` } : {}),
          ...(isTerminal(to) ? { finishedAt: now } : {}),
          ...(statePatch ? { state: sql`${runs.state} || ${JSON.stringify(statePatch)}::jsonb` } : {}),
          ...patch,
        })
        .where(and(eq(runs.id, id), inArray(runs.status, allowedSources(to))))
        .returning();
      return row;
    },

    /**
     * Re-opens an ended run that may be continued (run-status.ts REOPENABLE) as running and merges
     * `statePatch` into its state, in one statement and only if it is still in the end it was read in:
     * two people continuing it at once re-open it once.
     */
    async reopen(run: Pick<Run, 'id' | 'status' | 'endReason'>, statePatch: Record<string, unknown>): Promise<Run | undefined> {
      if (!canReopen(run)) return undefined;
      const [row] = await db
        .update(runs)
        .set({ status: 'running', endReason: null, error: null, finishedAt: null, updatedAt: new Date(), state: sql`${runs.state} || ${JSON.stringify(statePatch)}::jsonb` })
        .where(and(eq(runs.id, run.id), eq(runs.status, run.status), eq(runs.endReason, run.endReason!), sql`not (${runs.state} ? 'ending')`))
        .returning();
      return row;
    },

    /**
     * A re-opening asked for while the run's end is still being written (state.ending, finish.ts):
     * recorded for the end to act on once it is settled. False when the end was settled first (then
     * the caller re-opens it itself). Both are one conditional statement on the row, so exactly one
     * of the two sees the request.
     */
    async requestReopen(id: string): Promise<boolean> {
      const rows = await db
        .update(runs)
        .set({ state: sql`${runs.state} || '{"ending": "reopen"}'::jsonb`, updatedAt: new Date() })
        .where(and(eq(runs.id, id), sql`${runs.state} ? 'ending'`))
        .returning({ id: runs.id });
      return rows.length > 0;
    },

    /**
     * Clears the end's mark (state.ending); true when a re-opening was asked for meanwhile. First the
     * mark as the end set it, then the one a request turned it into: a request can only come before
     * the first statement (which then finds nothing, and the second finds it) or after it (and then
     * finds no mark: requestReopen says false).
     */
    async settleEnd(id: string): Promise<boolean> {
      const clear = (value: string) =>
        db
          .update(runs)
          .set({ state: sql`${runs.state} - 'ending'`, updatedAt: new Date() })
          .where(and(eq(runs.id, id), sql`${runs.state}->>'ending' = ${value}`))
          .returning({ id: runs.id });
      if ((await clear('true')).length > 0) return false;
      return (await clear('reopen')).length > 0;
    },

    async update(id: string, patch: Partial<Omit<Run, 'id' | 'status' | 'createdAt'>>): Promise<Run | undefined> {
      const [row] = await db
        .update(runs)
        .set({ ...patch, updatedAt: new Date() })
        .where(eq(runs.id, id))
        .returning();
      return row;
    },

    /** Adds model usage to the run's totals atomically (several turns never lose an increment). */
    async addUsage(id: string, usage: UsageDelta & { steps?: number }): Promise<void> {
      await db
        .update(runs)
        .set({
          costUsd: sql`${runs.costUsd} + ${usage.costUsd}`,
          inputTokens: sql`${runs.inputTokens} + ${usage.inputTokens}`,
          outputTokens: sql`${runs.outputTokens} + ${usage.outputTokens}`,
          cacheReadTokens: sql`${runs.cacheReadTokens} + ${usage.cacheReadTokens}`,
          cacheWriteTokens: sql`${runs.cacheWriteTokens} + ${usage.cacheWriteTokens}`,
          stepsUsed: sql`${runs.stepsUsed} + ${usage.steps ?? 0}`,
          updatedAt: new Date(),
        })
        .where(eq(runs.id, id));
    },

    /** Records a correct candidate as the best if it beats the current best (atomic compare). */
    async offerBest(id: string, evaluationId: number, speedup: number, speedupVsPeer: number | null): Promise<boolean> {
      const rows = await db
        .update(runs)
        .set({ bestEvaluationId: evaluationId, bestSpeedup: speedup, bestSpeedupVsPeer: speedupVsPeer, updatedAt: new Date() })
        .where(and(eq(runs.id, id), sql`(${runs.bestSpeedup} is null or ${runs.bestSpeedup} < ${speedup})`))
        .returning({ id: runs.id });
      return rows.length > 0;
    },
  };
}

export type RunRepository = ReturnType<typeof createRunRepository>;
