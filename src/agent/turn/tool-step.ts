import type { StoredMessage } from '../context/messages.js';
import { describeToolCall, executeTool } from '../tools/execute-tool.js';
import type { ToolResult } from '../tools/tool-types.js';
import { describeRun } from '../run-view.js';
import { appendMessage, pendingToolRow, toolUses } from './session.js';
import { patchState, refreshRun, type TurnContext } from './turn-context.js';
import { workerWait } from '../worker-wait.js';
import { StepAbortedError } from '../model/model-retry.js';
import { capToolResult, refuseToolCall } from './step-limits.js';

/**
 * Whether a call that was started but whose result was never stored (its worker died) may simply
 * run again. evaluate and gpu_bash reuse their reserved job number, so the harness never runs the
 * candidate twice; viewing or (re)creating a file gives the same result twice. A shell command or an
 * in-place edit may have half-happened: the model is told so, once, instead.
 */
export function isSafeToRerun(name: string, input: unknown): boolean {
  if (name === 'evaluate' || name === 'gpu_bash') return true;
  if (name === 'str_replace_based_edit_tool') {
    const command = (input as { command?: string } | null)?.command;
    return command === 'view' || command === 'create';
  }
  return false;
}

const INTERRUPTED =
  'This tool call was interrupted (the worker running it stopped) before its result was recorded. It may have run partly or completely: check the state of the workspace before repeating it.';

export interface ToolStepOutcome {
  evaluated: number;
  newBest: boolean;
}

/**
 * Before a job goes to the gpu-workers: when none is attached for the run's architecture, or all are
 * busy, the run says so (status card, terminal, `kernelseek runs`) instead of a silent `running`.
 * The note is cleared when the tool returns. A probe that fails (Redis down) says nothing.
 */
async function announceWorkerWait(ctx: TurnContext, tool: string): Promise<string | null> {
  if (!ctx.workers || (tool !== 'evaluate' && tool !== 'gpu_bash')) return null;
  const waiting = await workerWait(ctx.workers, tool, ctx.run.arch).catch(() => null);
  if (!waiting) return null;
  await patchState(ctx, { waitingForWorker: waiting });
  const view = describeRun(ctx.run, ctx.now());
  await ctx.reporter.statusChanged({ run: view, from: ctx.run.status, to: ctx.run.status });
  await ctx.reporter.error({ run: view, message: `The ${tool === 'evaluate' ? 'evaluation' : 'gpu_bash command'} is ${waiting}; it starts when one is free.`, fatal: false });
  return waiting;
}

/**
 * Answers every tool call of the conversation's last assistant message, in order, and appends the
 * user message with the results. Each result is stored as soon as it exists, so a resumed turn
 * answers each call exactly once. Calls over the step limits are answered as refused, unrun, and
 * every result is cut to the limit (step-limits.ts).
 */
export async function runToolStep(ctx: TurnContext, rows: StoredMessage[]): Promise<ToolStepOutcome> {
  const row = pendingToolRow(rows);
  if (!row) return { evaluated: 0, newBest: false };
  const stepSeq = Math.max(0, (await ctx.store.transcript.nextStepSeq(ctx.run.id)) - 1);
  const blocks: unknown[] = [];
  const outcome: ToolStepOutcome = { evaluated: 0, newBest: false };
  const uses = toolUses(row);
  for (const [index, use] of uses.entries()) {
    if (ctx.signal.aborted) throw new StepAbortedError();
    const existing = await ctx.store.agentRuns.findToolCall(ctx.run.id, use.id);
    const refused = refuseToolCall(ctx.config.agent.stepLimits, use, index, uses.length);
    let result: ToolResult;
    if (existing?.finishedAt) {
      result = { content: String(existing.result ?? ''), isError: existing.isError };
    } else if (refused) {
      // Recorded as a call that never ran, so the trace shows it; the same refusal again on a resume.
      result = { content: refused, isError: true };
      if (!existing) await ctx.store.transcript.startToolCall({ runId: ctx.run.id, stepSeq, toolUseId: use.id, name: use.name, input: use.input ?? {} });
      await ctx.store.transcript.finishToolCall(ctx.run.id, use.id, result.content, true, 0);
    } else if (existing && !isSafeToRerun(use.name, use.input)) {
      result = { content: INTERRUPTED, isError: true };
      await ctx.store.transcript.finishToolCall(ctx.run.id, use.id, result.content, true, 0);
    } else {
      if (!existing) await ctx.store.transcript.startToolCall({ runId: ctx.run.id, stepSeq, toolUseId: use.id, name: use.name, input: use.input ?? {} });
      await refreshRun(ctx);
      const input = (use.input ?? {}) as Record<string, unknown>;
      await ctx.reporter.toolStarted({ run: describeRun(ctx.run, ctx.now()), name: use.name, summary: describeToolCall(use.name, input) });
      const started = Date.now();
      const waitingFor = await announceWorkerWait(ctx, use.name);
      result = capToolResult(ctx.config.agent.stepLimits, await executeTool(use.name, use.input, {
        config: ctx.config,
        store: ctx.store,
        dispatcher: ctx.dispatcher,
        run: ctx.run,
        task: ctx.task,
        workspace: ctx.workspace,
        reporter: ctx.reporter,
        logger: ctx.logger,
        toolUseId: use.id,
        signal: ctx.signal,
      }));
      if (waitingFor) await patchState(ctx, { waitingForWorker: null });
      if (ctx.signal.aborted) throw new StepAbortedError();
      await ctx.store.transcript.finishToolCall(ctx.run.id, use.id, result.content, result.isError, Date.now() - started);
      if (result.evaluation) {
        outcome.evaluated++;
        outcome.newBest ||= result.evaluation.newBest;
      }
    }
    blocks.push({ type: 'tool_result', tool_use_id: use.id, content: result.content, ...(result.isError ? { is_error: true } : {}) });
  }
  await refreshRun(ctx);
  if (ctx.state.maxTokensBoost) {
    blocks.push({ type: 'text', text: '(Your last response was cut off at the output limit; a tool call after these was dropped. Keep each tool call small.)' });
  }
  await appendMessage(ctx.store, ctx.run.id, rows, 'user', blocks);
  return outcome;
}
