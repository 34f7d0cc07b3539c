import { and, asc, eq, max } from 'drizzle-orm';
import type { Database } from '../client.js';
import { agentSteps, runMessages, toolCalls } from '../schema.js';

export type RunMessage = typeof runMessages.$inferSelect;
export type AgentStep = typeof agentSteps.$inferSelect;
export type ToolCall = typeof toolCalls.$inferSelect;

/** The conversation, model calls and tool calls of runs: the trace that `kernelseek trace` exports. */
export function createTranscriptRepository(db: Database) {
  return {
    /**
     * Appends a message at exactly position `seq`. A second writer for the same position fails on the
     * unique index, so two workers can never both extend a conversation.
     */
    async appendMessage(runId: string, seq: number, role: RunMessage['role'], content: unknown[]): Promise<RunMessage> {
      const [row] = await db.insert(runMessages).values({ runId, seq, role, content }).returning();
      return row!;
    },

    async messages(runId: string): Promise<RunMessage[]> {
      return db.select().from(runMessages).where(eq(runMessages.runId, runId)).orderBy(asc(runMessages.seq));
    },

    async nextMessageSeq(runId: string): Promise<number> {
      const [row] = await db.select({ m: max(runMessages.seq) }).from(runMessages).where(eq(runMessages.runId, runId));
      return row?.m == null ? 0 : row.m + 1;
    },

    async recordStep(step: typeof agentSteps.$inferInsert): Promise<AgentStep> {
      const [row] = await db.insert(agentSteps).values(step).returning();
      return row!;
    },

    async steps(runId: string): Promise<AgentStep[]> {
      return db.select().from(agentSteps).where(eq(agentSteps.runId, runId)).orderBy(asc(agentSteps.seq));
    },

    async nextStepSeq(runId: string): Promise<number> {
      const [row] = await db.select({ m: max(agentSteps.seq) }).from(agentSteps).where(eq(agentSteps.runId, runId));
      return row?.m == null ? 0 : row.m + 1;
    },

    /** Records a tool call when it starts; idempotent per tool_use id. */
    async startToolCall(call: Pick<typeof toolCalls.$inferInsert, 'runId' | 'stepSeq' | 'toolUseId' | 'name' | 'input'>): Promise<void> {
      await db.insert(toolCalls).values(call).onConflictDoNothing();
    },

    async finishToolCall(runId: string, toolUseId: string, result: unknown, isError: boolean, durationMs: number): Promise<void> {
      await db
        .update(toolCalls)
        .set({ result, isError, durationMs, finishedAt: new Date() })
        .where(and(eq(toolCalls.runId, runId), eq(toolCalls.toolUseId, toolUseId)));
    },

    async toolCalls(runId: string): Promise<ToolCall[]> {
      return db.select().from(toolCalls).where(eq(toolCalls.runId, runId)).orderBy(asc(toolCalls.id));
    },
  };
}

export type TranscriptRepository = ReturnType<typeof createTranscriptRepository>;
