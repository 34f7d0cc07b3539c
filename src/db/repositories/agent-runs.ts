import { and, asc, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { agentSteps, decisionCards, questions, runMessages, runs, toolCalls } from '../schema.js';
import type { Question } from './questions.js';
import type { Run } from './runs.js';

export interface BudgetDelta {
  evals?: number;
  steps?: number;
  usd?: number;
  seconds?: number;
}

/** What a delivered question is asked with (for gain attribution). */
export interface DeliveryContext {
  evalSeqAtAsk: number;
  bestBefore: number | null;
  trigger: string | null;
  evidence: Record<string, unknown> | null;
  /**
   * The decision card being answered (`<run>.d<n>`), or null at a turn boundary. Questions bound to
   * another card are never claimed; a delivery that answers the card closes it and clears the run's
   * pending decision in the same transaction, under the run's row lock (see addBoundQuestion).
   */
  decisionId?: string | null;
}

/** Questions that may be delivered now: unbound ones, and those bound to the open card `decisionId`. */
function deliverable(decisionId: string | null | undefined) {
  return decisionId ? or(isNull(questions.decisionId), eq(questions.decisionId, decisionId)) : isNull(questions.decisionId);
}

export type BoundQuestionResult =
  | { kind: 'added'; question: Question; created: boolean }
  /** The card is not the run's open decision point (answered, superseded, or the run ended). */
  | { kind: 'closed'; openDecisionId: string | null };

/**
 * Repository functions the agent engine needs beyond the basic ones: atomic state merges, sequence
 * reservations for re-executable tool calls, and question delivery that is atomic with the message
 * that carries the questions (so a question is delivered exactly once, never lost).
 */
export function createAgentRunRepository(db: Database) {
  return {
    /** Shallow-merges `patch` into `runs.state` in one statement (other top-level keys untouched). */
    async patchState(id: string, patch: Record<string, unknown>): Promise<Run | undefined> {
      const [row] = await db
        .update(runs)
        .set({ state: sql`${runs.state} || ${JSON.stringify(patch)}::jsonb`, updatedAt: new Date() })
        .where(eq(runs.id, id))
        .returning();
      return row;
    },

    /**
     * Moves the turn counter from `from` to `from + 1` and merges `patch`, only if no other worker did
     * it first. False means this turn job is a stale duplicate.
     */
    async advanceTurn(id: string, from: number, patch: Record<string, unknown> = {}): Promise<boolean> {
      const rows = await db
        .update(runs)
        .set({ state: sql`${runs.state} || ${JSON.stringify({ ...patch, turn: from + 1 })}::jsonb`, updatedAt: new Date() })
        .where(and(eq(runs.id, id), sql`coalesce((${runs.state}->>'turn')::int, 0) = ${from}`))
        .returning({ id: runs.id });
      return rows.length > 0;
    },

    /**
     * Reserves the evaluation number of a tool call, once: the same tool_use id always gets the same
     * number, so a call re-executed after a crash reuses its job id and never evaluates twice.
     */
    async reserveEvaluationSeq(id: string, toolUseId: string): Promise<number> {
      for (let attempt = 0; attempt < 3; attempt++) {
        const [current] = await db.select({ state: runs.state }).from(runs).where(eq(runs.id, id));
        const existing = (current?.state as { toolSeqs?: Record<string, { evalSeq?: number }> } | undefined)?.toolSeqs?.[toolUseId]?.evalSeq;
        if (existing !== undefined) return existing;
        const rows = await db
          .update(runs)
          .set({
            evalsUsed: sql`${runs.evalsUsed} + 1`,
            state: sql`jsonb_set(${runs.state} || jsonb_build_object('toolSeqs', coalesce(${runs.state}->'toolSeqs', '{}'::jsonb)), array['toolSeqs', ${toolUseId}::text], jsonb_build_object('evalSeq', ${runs.evalsUsed} + 1), true)`,
            updatedAt: new Date(),
          })
          .where(and(eq(runs.id, id), sql`not coalesce(${runs.state}->'toolSeqs' ? ${toolUseId}::text, false)`))
          .returning({ seq: runs.evalsUsed });
        if (rows[0]) return rows[0].seq;
      }
      throw new Error(`could not reserve an evaluation number for ${toolUseId}`);
    },

    /** Same as reserveEvaluationSeq, for gpu_bash jobs (counter kept in the state). */
    async reserveGpuSeq(id: string, toolUseId: string): Promise<number> {
      for (let attempt = 0; attempt < 3; attempt++) {
        const [current] = await db.select({ state: runs.state }).from(runs).where(eq(runs.id, id));
        const existing = (current?.state as { toolSeqs?: Record<string, { gpuSeq?: number }> } | undefined)?.toolSeqs?.[toolUseId]?.gpuSeq;
        if (existing !== undefined) return existing;
        const next = sql`coalesce((${runs.state}->>'nextGpuSeq')::int, 1)`;
        const rows = await db
          .update(runs)
          .set({
            state: sql`jsonb_set(${runs.state} || jsonb_build_object('toolSeqs', coalesce(${runs.state}->'toolSeqs', '{}'::jsonb), 'nextGpuSeq', ${next} + 1), array['toolSeqs', ${toolUseId}::text], jsonb_build_object('gpuSeq', ${next}), true)`,
            updatedAt: new Date(),
          })
          .where(and(eq(runs.id, id), sql`not coalesce(${runs.state}->'toolSeqs' ? ${toolUseId}::text, false)`))
          .returning({ state: runs.state });
        const seq = (rows[0]?.state as { toolSeqs?: Record<string, { gpuSeq?: number }> } | undefined)?.toolSeqs?.[toolUseId]?.gpuSeq;
        if (seq !== undefined) return seq;
      }
      throw new Error(`could not reserve a gpu_bash number for ${toolUseId}`);
    },

    /** Adds to a live run's budgets (negative values are refused by the caller). */
    async addBudget(id: string, delta: BudgetDelta): Promise<Run | undefined> {
      const [row] = await db
        .update(runs)
        .set({
          budgetEvals: sql`${runs.budgetEvals} + ${delta.evals ?? 0}`,
          budgetSteps: sql`${runs.budgetSteps} + ${delta.steps ?? 0}`,
          budgetUsd: sql`${runs.budgetUsd} + ${delta.usd ?? 0}`,
          budgetSeconds: sql`${runs.budgetSeconds} + ${delta.seconds ?? 0}`,
          updatedAt: new Date(),
        })
        .where(eq(runs.id, id))
        .returning();
      return row;
    },

    /** Completes a model step recorded at its start. */
    async finishStep(runId: string, seq: number, fields: Partial<Pick<typeof agentSteps.$inferInsert, 'request' | 'response' | 'stopReason' | 'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'cacheWriteTokens' | 'costUsd' | 'latencyMs' | 'error'>>): Promise<void> {
      await db.update(agentSteps).set(fields).where(and(eq(agentSteps.runId, runId), eq(agentSteps.seq, seq)));
    },

    async findToolCall(runId: string, toolUseId: string) {
      const [row] = await db.select().from(toolCalls).where(and(eq(toolCalls.runId, runId), eq(toolCalls.toolUseId, toolUseId)));
      return row;
    },

    /**
     * Delivers questions in one transaction: claims the run's pending questions (oldest first), adds
     * `extra` (a bank question) as delivered when no person's question was pending, records what each was asked with, and appends the user
     * message that carries them at `seq`. If the append fails (another worker extended the
     * conversation), nothing is marked delivered.
     */
    async deliverQuestions(
      runId: string,
      seq: number,
      context: DeliveryContext,
      extra: Omit<typeof questions.$inferInsert, 'runId' | 'deliveredAt' | 'evalSeqAtAsk' | 'bestBefore'> | null,
      buildContent: (delivered: Question[]) => unknown[],
    ): Promise<Question[]> {
      return db.transaction(async (tx) => {
        const now = new Date();
        const decisionId = context.decisionId ?? null;
        // The run's row lock orders this delivery against answers bound to the card (addBoundQuestion).
        if (decisionId) await tx.select({ id: runs.id }).from(runs).where(eq(runs.id, runId)).for('update');
        const claimed = await tx
          .update(questions)
          .set({ deliveredAt: now, evalSeqAtAsk: context.evalSeqAtAsk, bestBefore: context.bestBefore })
          .where(and(eq(questions.runId, runId), isNull(questions.deliveredAt), deliverable(decisionId)))
          .returning();
        claimed.sort((a, b) => a.id - b.id);
        // The question that answers a decision point carries its trigger and evidence.
        if (claimed[0] && context.trigger) {
          const [first] = await tx
            .update(questions)
            .set({ trigger: context.trigger, evidence: context.evidence })
            .where(eq(questions.id, claimed[0].id))
            .returning();
          claimed[0] = first!;
        }
        const delivered = [...claimed];
        // A person's question always wins over the bank's, even one that arrived a moment ago.
        if (extra && claimed.length === 0) {
          const [row] = await tx
            .insert(questions)
            .values({ ...extra, runId, deliveredAt: now, evalSeqAtAsk: context.evalSeqAtAsk, bestBefore: context.bestBefore, decisionId })
            .returning();
          delivered.push(row!);
        }
        if (delivered.length === 0) return [];
        await tx.insert(runMessages).values({ runId, seq, role: 'user', content: buildContent(delivered) });
        if (decisionId) {
          // Answered: the card closes and the run no longer waits on it, before the lock is released,
          // so an answer bound to it that comes later is refused instead of waiting forever.
          await tx
            .update(decisionCards)
            .set({ closedAt: now, closedBy: `question:${delivered[0]!.id}` })
            .where(and(eq(decisionCards.id, decisionId), isNull(decisionCards.closedAt)));
          await tx
            .update(runs)
            .set({ state: sql`${runs.state} || '{"decision":null}'::jsonb`, updatedAt: now })
            .where(and(eq(runs.id, runId), sql`${runs.state}->'decision'->>'id' = ${decisionId}`));
        }
        return delivered;
      });
    },

    /**
     * Takes the run's lease for `owner` for `seconds` if it is free, expired or already `owner`'s
     * (the database's clock decides, so hosts with skewed clocks agree). Undefined: another process
     * holds it.
     */
    async acquireLease(id: string, owner: string, seconds: number): Promise<Run | undefined> {
      const [row] = await db
        .update(runs)
        .set({ leaseOwner: owner, leaseExpiresAt: sql`now() + (${seconds}::float8 * interval '1 second')` })
        .where(and(eq(runs.id, id), or(isNull(runs.leaseOwner), eq(runs.leaseOwner, owner), lt(runs.leaseExpiresAt, sql`now()`))))
        .returning();
      return row;
    },

    /** The heartbeat: extends `owner`'s lease. False: the lease was taken over (or released). */
    async renewLease(id: string, owner: string, seconds: number): Promise<boolean> {
      const rows = await db
        .update(runs)
        .set({ leaseExpiresAt: sql`now() + (${seconds}::float8 * interval '1 second')` })
        .where(and(eq(runs.id, id), eq(runs.leaseOwner, owner)))
        .returning({ id: runs.id });
      return rows.length > 0;
    },

    /** Gives the lease up (the host stops on purpose): the run is not shown as interrupted. */
    async releaseLease(id: string, owner?: string): Promise<void> {
      await db
        .update(runs)
        .set({ leaseOwner: null, leaseExpiresAt: null })
        .where(owner ? and(eq(runs.id, id), eq(runs.leaseOwner, owner)) : and(eq(runs.id, id), lt(runs.leaseExpiresAt, sql`now()`)));
    },

    /**
     * Undelivered questions that may be delivered now: unbound ones, and those bound to `decisionId`
     * (the open decision card, if any). An answer bound to a card that closed without it (the run
     * ended while it waited) is never delivered to another decision point.
     */
    async pendingQuestions(runId: string, decisionId?: string | null): Promise<Question[]> {
      return db
        .select()
        .from(questions)
        .where(and(eq(questions.runId, runId), isNull(questions.deliveredAt), deliverable(decisionId)))
        .orderBy(asc(questions.id));
    },

    /**
     * A person's answer to one decision card. Stored only while that card is the run's open decision
     * point, checked under the run's row lock that deliverQuestions also takes: either the answer is
     * stored before the card is answered (and delivered with it), or the card has closed and the
     * answer is refused. A redelivery (same external id) returns the stored question, open or not.
     */
    async addBoundQuestion(
      runId: string,
      decisionId: string,
      input: Omit<typeof questions.$inferInsert, 'runId' | 'decisionId' | 'deliveredAt'> & { externalId: string },
    ): Promise<BoundQuestionResult> {
      return db.transaction(async (tx) => {
        const [run] = await tx.select({ state: runs.state }).from(runs).where(eq(runs.id, runId)).for('update');
        const [existing] = await tx
          .select()
          .from(questions)
          .where(and(eq(questions.runId, runId), eq(questions.externalId, input.externalId)));
        if (existing) return { kind: 'added', question: existing, created: false };
        const open = (run?.state as { decision?: { id?: string } | null } | undefined)?.decision?.id ?? null;
        if (open !== decisionId) return { kind: 'closed', openDecisionId: open };
        const [row] = await tx
          .insert(questions)
          .values({ ...input, runId, decisionId })
          .returning();
        return { kind: 'added', question: row!, created: true };
      });
    },
  };
}

export type AgentRunRepository = ReturnType<typeof createAgentRunRepository>;
