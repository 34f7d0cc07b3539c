import { formatCandidate } from '../../harness/candidate.js';
import { withCacheBreakpoints } from '../context/cache-control.js';
import { buildCompactionNote, planCompaction } from '../context/compaction.js';
import { estimateTokens, toApiMessages, type StoredMessage } from '../context/messages.js';
import type { ModelRequest } from '../model/types.js';
import { patchState, type TurnContext } from './turn-context.js';

/** Hard ceiling for one step's output allowance after a max_tokens cut-off. */
const MAX_OUTPUT_CEILING = 64_000;

export interface PreparedRequest {
  request: ModelRequest;
  estimatedTokens: number;
  breakpoints: number;
  /** What `agent_steps.request` stores: everything but the messages, which are rows of run_messages. */
  record: Record<string, unknown>;
}

/**
 * Builds the next request from the stored conversation: compaction when the estimate exceeds the
 * context budget (persisted, so later steps send the same prefix), cache breakpoints, and the
 * output allowance.
 */
export async function prepareRequest(ctx: TurnContext, rows: StoredMessage[], options: { forceCompaction?: boolean } = {}): Promise<PreparedRequest> {
  const fixedTokens = estimateTokens({ system: ctx.system, tools: ctx.tools });
  const budget = ctx.config.agent.contextBudgetTokens;
  let compaction = ctx.state.compaction;
  const needsPlan = options.forceCompaction || fixedTokens + estimateTokens(toApiMessages(rows, compaction)) > budget;
  if (needsPlan) {
    const [evaluations, questions] = await Promise.all([ctx.store.evaluations.forRun(ctx.run.id), ctx.store.questions.forRun(ctx.run.id)]);
    const best = ctx.run.bestEvaluationId != null ? (evaluations.find((e) => e.id === ctx.run.bestEvaluationId) ?? null) : null;
    const planned = planCompaction({
      rows,
      current: compaction,
      fixedTokens,
      budgetTokens: budget,
      force: options.forceCompaction,
      // A folder kernel's best is shown file by file, not as its stored document.
      note: () => buildCompactionNote({ evaluations, best: best && { ...best, source: formatCandidate(best.source, ctx.task.layout) }, questions, kernelFile: ctx.task.task.kernel.file }),
    });
    if (planned && (planned.throughSeq !== compaction?.throughSeq || planned.note !== compaction?.note)) {
      ctx.logger.info({ runId: ctx.run.id, throughSeq: planned.throughSeq }, 'compacting old tool results');
      await patchState(ctx, { compaction: planned });
      compaction = planned;
    }
  }
  const cached = withCacheBreakpoints({ tools: ctx.tools, system: ctx.system, messages: toApiMessages(rows, compaction) });
  const maxTokens = ctx.state.maxTokensBoost ? Math.min(MAX_OUTPUT_CEILING, ctx.config.agent.maxOutputTokens * 2) : ctx.config.agent.maxOutputTokens;
  const request: ModelRequest = {
    model: ctx.run.model,
    max_tokens: maxTokens,
    system: cached.system,
    tools: cached.tools,
    messages: cached.messages,
  };
  const estimatedTokens = estimateTokens({ system: request.system, tools: request.tools, messages: request.messages });
  return {
    request,
    estimatedTokens,
    breakpoints: cached.breakpoints,
    record: {
      model: request.model,
      max_tokens: maxTokens,
      tools: ctx.tools.map((t) => (t as { name?: string }).name ?? '?'),
      system_chars: ctx.system.length,
      message_seqs: rows.length > 0 ? [rows[0]!.seq, rows.at(-1)!.seq] : [],
      compacted_through_seq: compaction?.throughSeq ?? null,
      cache_breakpoints: cached.breakpoints,
      estimated_tokens: estimatedTokens,
      context_budget_tokens: ctx.config.agent.contextBudgetTokens,
    },
  };
}
