import type { StoredMessage } from '../context/messages.js';
import { toParamBlocks } from '../context/messages.js';
import { callModelWithRetry, ContextOverflowError } from '../model/model-retry.js';
import { costOf, readUsage, type StepUsage } from '../model/pricing.js';
import { StreamStalledError } from '../model/stream-idle.js';
import type { Message } from '../model/types.js';
import { describeRun } from '../run-view.js';
import { prepareRequest } from './prepare-request.js';
import { appendMessage } from './session.js';
import { requestAllowance } from './step-limits.js';
import { patchState, refreshRun, type TurnContext } from './turn-context.js';

export type ModelStepOutcome =
  | { kind: 'tool_use' }
  | { kind: 'end_turn'; stopReason: string }
  | { kind: 'max_tokens'; droppedToolCall: boolean }
  | { kind: 'pause_turn' }
  | { kind: 'refusal'; explanation: string }
  | { kind: 'compacted' }
  /** The dollar budget left cannot pay for one more request at its worst case (step-limits.ts); nothing was sent. */
  | { kind: 'budget_spent'; message: string };

const warnedModels = new Set<string>();

function sumUsage(parts: StepUsage[]): StepUsage {
  const sum: StepUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 };
  for (const p of parts) for (const k of Object.keys(sum) as (keyof StepUsage)[]) sum[k] += p[k];
  return sum;
}

function usageColumns(u: StepUsage) {
  return { inputTokens: u.inputTokens, outputTokens: u.outputTokens, cacheReadTokens: u.cacheReadTokens, cacheWriteTokens: u.cacheWrite5mTokens + u.cacheWrite1hTokens };
}

/** The response's content as the request will carry it back; a cut-off tool call is dropped. */
function assistantContent(message: Message): { content: unknown[]; droppedToolCall: boolean } {
  let blocks = [...message.content] as unknown as { type: string }[];
  let droppedToolCall = false;
  if (message.stop_reason === 'max_tokens' && blocks.at(-1)?.type === 'tool_use') {
    blocks = blocks.slice(0, -1);
    droppedToolCall = true;
  }
  const content = toParamBlocks(blocks) as unknown[];
  // The API refuses an empty assistant message.
  if (content.length === 0) content.push({ type: 'text', text: '(no output: the response was cut off)' });
  return { content, droppedToolCall };
}

/**
 * One model call: the request is recorded before it is sent, the response, usage and cost as soon
 * as it arrives, then the assistant message is appended. A crash before the append loses only the
 * response (paid for and recorded in agent_steps); the resumed turn asks again, and the model sees
 * neither a duplicate nor a gap.
 */
export async function runModelStep(ctx: TurnContext, rows: StoredMessage[], options: { forceCompaction?: boolean } = {}): Promise<ModelStepOutcome> {
  const prepared = await prepareRequest(ctx, rows, options);
  const allowance = requestAllowance(ctx.run, prepared.estimatedTokens, prepared.request.max_tokens);
  if (allowance.kind === 'spent') return { kind: 'budget_spent', message: allowance.message };
  if (allowance.maxTokens < prepared.request.max_tokens) {
    prepared.request.max_tokens = allowance.maxTokens;
    prepared.record.max_tokens = allowance.maxTokens;
    prepared.record.max_tokens_lowered_for_budget = true;
  }
  const seq = await ctx.store.transcript.nextStepSeq(ctx.run.id);
  await ctx.store.transcript.recordStep({ runId: ctx.run.id, seq, model: ctx.run.model, request: prepared.record });
  await ctx.reporter.stepStarted?.({ run: describeRun(ctx.run, ctx.now()), step: seq });
  const started = Date.now();
  // Failed attempts (429, 529, …) belong to this step: they are listed in its request record.
  const retries: { attempt: number; delayMs: number; reason: string }[] = [];
  // Attempts abandoned after the response had started (a stalled stream) are billed: their usage counts.
  const abandoned: StepUsage[] = [];
  const record = () => ({ ...prepared.record, attempts: retries.length + 1, retries });
  let message: Message;
  try {
    ({ message } = await callModelWithRetry(ctx.model, prepared.request, {
      signal: ctx.signal,
      policy: { ...ctx.retryPolicy, attempts: ctx.config.agent.modelRetries },
      onRetry: ({ usage, ...n }) => {
        retries.push(n);
        if (usage) abandoned.push(readUsage(usage));
        // Connection failures end in one message of their own after a few seconds; no log noise first.
        const log = n.reason.startsWith('Cannot reach') ? ctx.logger.debug.bind(ctx.logger) : ctx.logger.warn.bind(ctx.logger);
        log({ runId: ctx.run.id, attempt: n.attempt, delayMs: n.delayMs, reason: n.reason }, 'model call failed; retrying');
      },
    }));
  } catch (error) {
    const lost = (error as { cause?: unknown }).cause;
    if (lost instanceof StreamStalledError && lost.usage) abandoned.push(readUsage(lost.usage));
    const spent = sumUsage(abandoned);
    const lostCost = costOf(ctx.run.model, spent).costUsd;
    await ctx.store.agentRuns.finishStep(ctx.run.id, seq, { request: record(), error: (error as Error).message, latencyMs: Date.now() - started, ...(lostCost > 0 ? { costUsd: lostCost, ...usageColumns(spent) } : {}) });
    if (lostCost > 0) await ctx.store.runs.addUsage(ctx.run.id, { costUsd: lostCost, ...usageColumns(spent), steps: 0 });
    if (error instanceof ContextOverflowError) {
      await prepareRequest(ctx, rows, { forceCompaction: true });
      return { kind: 'compacted' };
    }
    throw error;
  }
  const usage = sumUsage([readUsage(message.usage), ...abandoned]);
  const cost = costOf(ctx.run.model, usage);
  if (!cost.known && !warnedModels.has(ctx.run.model)) {
    warnedModels.add(ctx.run.model);
    ctx.logger.warn({ model: ctx.run.model, pricedAs: cost.family }, 'unknown model: priced as the most expensive family');
  }
  await ctx.store.agentRuns.finishStep(ctx.run.id, seq, {
    request: record(),
    response: message as unknown as Record<string, unknown>,
    stopReason: message.stop_reason,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens: usage.cacheReadTokens,
    cacheWriteTokens: usage.cacheWrite5mTokens + usage.cacheWrite1hTokens,
    costUsd: cost.costUsd,
    latencyMs: Date.now() - started,
  });
  await ctx.store.runs.addUsage(ctx.run.id, {
    costUsd: cost.costUsd,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens: usage.cacheReadTokens,
    cacheWriteTokens: usage.cacheWrite5mTokens + usage.cacheWrite1hTokens,
    steps: 1,
  });
  await refreshRun(ctx);
  const toolNames = message.content.filter((b) => b.type === 'tool_use').map((b) => (b as { name: string }).name);
  await ctx.reporter.stepFinished({ run: describeRun(ctx.run, ctx.now()), step: seq, stopReason: message.stop_reason, costUsd: cost.costUsd, toolCalls: toolNames });

  const stop = message.stop_reason ?? 'end_turn';
  if (stop === 'refusal') {
    const details = message.stop_details;
    return { kind: 'refusal', explanation: details?.explanation ?? (details?.category ? `category: ${details.category}` : 'no explanation given') };
  }
  if (stop === 'model_context_window_exceeded') {
    // The answer was cut short by the window: drop it, compact, ask again.
    await prepareRequest(ctx, rows, { forceCompaction: true });
    return { kind: 'compacted' };
  }
  const { content, droppedToolCall } = assistantContent(message);
  const appended = await appendMessage(ctx.store, ctx.run.id, rows, 'assistant', content);
  if (stop === 'pause_turn') await patchState(ctx, { pauseTurnSeq: appended.seq });
  if (ctx.state.maxTokensBoost !== (stop === 'max_tokens')) await patchState(ctx, { maxTokensBoost: stop === 'max_tokens' });
  if (stop === 'pause_turn') return { kind: 'pause_turn' };
  const hasTools = content.some((b) => (b as { type: string }).type === 'tool_use');
  if (stop === 'max_tokens') return hasTools ? { kind: 'tool_use' } : { kind: 'max_tokens', droppedToolCall };
  if (hasTools) return { kind: 'tool_use' };
  return { kind: 'end_turn', stopReason: stop };
}

/** The user message that follows a cut-off response without tool calls. */
export function maxTokensNote(droppedToolCall: boolean, limit: number): unknown[] {
  return [
    {
      type: 'text',
      text: `(Your last response was cut off at the output limit of ${limit} tokens${droppedToolCall ? ' and its unfinished tool call was dropped' : ''}. Continue from there; keep each tool call small, e.g. write a large file in several edits.)`,
    },
  ];
}
