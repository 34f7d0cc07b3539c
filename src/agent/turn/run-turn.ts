import { describeError, NonRetryableError } from '../../core/errors.js';
import type { Decision } from '../decisions/detect.js';
import { isTerminal, NO_EVALUATION, type RunStatus } from '../../db/index.js';
import { endReasonOf } from '../model/model-errors.js';
import { StepAbortedError } from '../model/model-retry.js';
import { parseRunState } from '../run-state.js';
import { describeRun } from '../run-view.js';
import type { TurnJob } from '../scheduler.js';
import { spentBudget } from './budgets.js';
import { checkForDecision, deliverPendingQuestions, enterDecision, resolveDecision } from './decision-step.js';
import { endRun } from './finish.js';
import { maxTokensNote, runModelStep } from './model-step.js';
import { transitionRun, type EngineServices } from './services.js';
import { appendMessage, loadConversation, pendingToolRow } from './session.js';
import { runToolStep } from './tool-step.js';
import { loadTurnContext, patchState, refreshRun, type TurnContext } from './turn-context.js';

/** A turn takes no new step after this long, so one job never holds a worker for long. */
export const TURN_SOFT_LIMIT_MS = 5 * 60 * 1000;

export type TurnOutcome =
  | { kind: 'ignored'; reason: string }
  | { kind: 'continued'; nextTurn: number }
  | { kind: 'waiting'; nextTurn: number; until: Date | null }
  | { kind: 'paused'; nextTurn: number }
  | { kind: 'ended'; status: RunStatus; endReason: string | null };

/** Ends this turn: advances the counter (only one worker can) and schedules the next, if any. */
async function closeTurn(ctx: TurnContext, job: TurnJob, next: { delayMs: number } | null): Promise<boolean> {
  const advanced = await ctx.store.agentRuns.advanceTurn(ctx.run.id, job.turn);
  if (!advanced) return false;
  if (next) await ctx.scheduler.schedule({ runId: ctx.run.id, turn: job.turn + 1 }, { delayMs: Math.max(0, next.delayMs) });
  return true;
}

async function wait(ctx: TurnContext, job: TurnJob, deadline: Date | null): Promise<TurnOutcome> {
  if (ctx.run.status === 'running') {
    const moved = await transitionRun(ctx, ctx.run, 'waiting');
    if (moved) await refreshRun(ctx);
  }
  // A person may have answered while the decision point was being recorded: go at once.
  const pending = await ctx.store.agentRuns.pendingQuestions(ctx.run.id, ctx.state.decision?.id);
  const delayMs = pending.length > 0 || !deadline ? 0 : deadline.getTime() - ctx.now().getTime() + 25;
  const closed = await closeTurn(ctx, job, { delayMs });
  // A question that arrived between the check above and the scheduling may have tried to wake a
  // turn that did not exist yet: look once more, now that the delayed turn does.
  if (closed && delayMs > 0) {
    await refreshRun(ctx);
    const bankRequested = ctx.state.bankRequestedAt !== null && ctx.state.decision !== null && ctx.state.bankRequestedAt >= ctx.state.decision.at;
    if (bankRequested || (await ctx.store.agentRuns.pendingQuestions(ctx.run.id, ctx.state.decision?.id)).length > 0) {
      await ctx.scheduler.wake({ runId: ctx.run.id, turn: job.turn + 1 });
    }
  }
  return { kind: 'waiting', nextTurn: job.turn + 1, until: deadline };
}

/** Checks done before every step: a run stopped, paused or out of budget takes no further step. */
async function gate(ctx: TurnContext, job: TurnJob): Promise<TurnOutcome | null> {
  await refreshRun(ctx);
  if (isTerminal(ctx.run.status)) return { kind: 'ended', status: ctx.run.status, endReason: ctx.run.endReason };
  if (ctx.run.status === 'paused') {
    const closed = await closeTurn(ctx, job, null);
    // A resume between the read above and the close scheduled this turn, which is ending without a
    // successor: the next one is scheduled here (the same job id as a resume after the close makes).
    if (closed && (await ctx.store.runs.get(ctx.run.id))?.status === 'running') {
      await ctx.scheduler.schedule({ runId: ctx.run.id, turn: job.turn + 1 }, { delayMs: 0 });
    }
    return { kind: 'paused', nextTurn: job.turn + 1 };
  }
  const spent = spentBudget(ctx.run, ctx.now());
  if (spent) {
    const ended = await endRun(ctx, ctx.run, 'finished', spent);
    return { kind: 'ended', status: ended.status, endReason: ended.endReason };
  }
  return null;
}

/**
 * Enters a decision point, unless a budget is spent (then the run simply ends) or the run has reached
 * `convergeStops` decision points in a row without evaluating anything in between. Every kind counts
 * (`stopped`, `claimed_limit`, any other): a model that answers every question with "the kernel is
 * optimal" makes `claimed_limit` points, not `stopped` ones, and must not cycle the bank either.
 * Questions no longer move it, so asking more only spends money: the run ends as converged (a reply
 * re-opens it). Plateau and failing points need evaluations since the last point, so they always
 * start a new streak.
 */
async function decide(ctx: TurnContext, job: TurnJob, decision: Decision): Promise<TurnOutcome> {
  const stop = await gate(ctx, job);
  if (stop) return stop;
  const streak = ctx.state.stopStreak > 0 && ctx.run.evalsUsed === ctx.state.stopStreakEvalSeq ? ctx.state.stopStreak + 1 : 1;
  await patchState(ctx, { stopStreak: streak, stopStreakEvalSeq: ctx.run.evalsUsed });
  if (streak >= ctx.config.agent.runs.convergeStops) {
    const ended = await endRun(ctx, ctx.run, 'finished', 'converged', convergedMessage(streak));
    return { kind: 'ended', status: ended.status, endReason: ended.endReason };
  }
  return wait(ctx, job, (await enterDecision(ctx, decision)).deadline);
}

export function convergedMessage(points: number): string {
  return `The agent reached ${points} decision points in a row (it stopped or claimed a limit) without a new evaluation in between, so the run ended as converged. Reply (or continue it) to re-open it with a question.`;
}

/**
 * The request cap: a run whose agent has made `stepsPerEval` model requests since its last
 * evaluation (or its start, or its re-opening) talks without measuring, and ends (`no_evaluation`,
 * re-openable like a converged run). Checked before each model request.
 */
async function talkCap(ctx: TurnContext): Promise<TurnOutcome | null> {
  if (ctx.state.stepsAtLastEval === undefined || ctx.state.stepsAtLastEval > ctx.run.stepsUsed) {
    // A state saved before the cap, or a counter out of step: count from now.
    await patchState(ctx, { stepsAtLastEval: ctx.run.stepsUsed });
    return null;
  }
  const since = ctx.run.stepsUsed - ctx.state.stepsAtLastEval;
  const cap = ctx.config.agent.runs.stepsPerEval;
  if (since < cap) return null;
  const message = `The agent made ${since} model requests without evaluating a candidate (the cap is ${cap}, KERNELSEEK_STEPS_PER_EVAL), so the run ended. Reply (or continue it) to re-open it with a question.`;
  await ctx.reporter.error({ run: describeRun(ctx.run, ctx.now()), message, fatal: false });
  const ended = await endRun(ctx, ctx.run, 'finished', NO_EVALUATION, message);
  return { kind: 'ended', status: ended.status, endReason: ended.endReason };
}

async function stepsOfTurn(ctx: TurnContext, job: TurnJob): Promise<TurnOutcome> {
  const rows = await loadConversation(ctx.store, ctx.run.id);
  const stopped = await gate(ctx, job);
  if (stopped) return stopped;
  // The turn boundary: a pending decision point is settled, or questions that arrived meanwhile are delivered.
  if (ctx.state.decision) {
    const settled = await resolveDecision(ctx, rows);
    if (settled.kind === 'wait') return wait(ctx, job, settled.deadline);
  } else if (!pendingToolRow(rows)) {
    await deliverPendingQuestions(ctx, rows);
  }

  const started = Date.now();
  for (let step = 0; step < ctx.config.agent.stepsPerTurn && Date.now() - started < TURN_SOFT_LIMIT_MS; step++) {
    const stop = await gate(ctx, job);
    if (stop) return stop;

    if (pendingToolRow(rows)) {
      await runToolStep(ctx, rows);
      const decision = await checkForDecision(ctx, rows, { endedWithoutToolCall: false });
      if (decision) return decide(ctx, job, decision);
      continue;
    }

    const last = rows.at(-1);
    if (last?.role === 'assistant' && last.seq !== ctx.state.pauseTurnSeq) {
      // The model ended its turn, and the decision point it made was lost (the worker died).
      const decision = await checkForDecision(ctx, rows, { endedWithoutToolCall: true });
      if (decision) return decide(ctx, job, decision);
    }

    const capped = await talkCap(ctx);
    if (capped) return capped;
    const outcome = await runModelStep(ctx, rows);
    switch (outcome.kind) {
      case 'tool_use':
      case 'pause_turn':
      case 'compacted':
        break;
      case 'max_tokens':
        await appendMessage(ctx.store, ctx.run.id, rows, 'user', maxTokensNote(outcome.droppedToolCall, ctx.config.agent.maxOutputTokens));
        break;
      case 'refusal': {
        await ctx.reporter.error({ run: describeRun(ctx.run, ctx.now()), message: `The model refused to continue: ${outcome.explanation}`, fatal: true });
        const ended = await endRun(ctx, ctx.run, 'stopped', 'model_refusal', `The model refused to continue: ${outcome.explanation}`);
        return { kind: 'ended', status: ended.status, endReason: ended.endReason };
      }
      case 'end_turn': {
        const decision = await checkForDecision(ctx, rows, { endedWithoutToolCall: true });
        if (decision) return decide(ctx, job, decision);
        break;
      }
      case 'budget_spent': {
        ctx.logger.info({ runId: ctx.run.id }, outcome.message);
        const ended = await endRun(ctx, ctx.run, 'finished', 'budget_usd');
        return { kind: 'ended', status: ended.status, endReason: ended.endReason };
      }
    }
  }
  await closeTurn(ctx, job, { delayMs: 0 });
  return { kind: 'continued', nextTurn: job.turn + 1 };
}

/**
 * One turn of one run (the `agent-turn` job): loads the run from the store, settles a pending
 * decision point or delivers waiting questions, performs up to `stepsPerTurn` model steps with
 * their tool calls, and schedules the next turn. Safe to run again after a crash: a duplicate or
 * stale job (another turn number) does nothing.
 */
export async function processTurn(services: EngineServices, job: TurnJob, signal?: AbortSignal): Promise<TurnOutcome> {
  let run = await services.store.runs.get(job.runId);
  if (!run) return { kind: 'ignored', reason: 'no such run' };
  if (isTerminal(run.status)) return { kind: 'ignored', reason: `run is ${run.status}` };
  if (parseRunState(run.state).turn !== job.turn) return { kind: 'ignored', reason: 'stale turn' };
  if (run.status === 'paused') {
    // Move the counter on, so that resuming schedules a turn number no job has used yet.
    await services.store.agentRuns.advanceTurn(run.id, job.turn);
    return { kind: 'paused', nextTurn: job.turn + 1 };
  }

  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  services.inFlight.set(run.id, controller);
  try {
    if (run.status === 'queued') run = (await transitionRun(services, run, 'running')) ?? run;
    const ctx = await loadTurnContext(services, run, controller.signal);
    try {
      return await stepsOfTurn(ctx, job);
    } catch (error) {
      const current = (await services.store.runs.get(job.runId)) ?? run;
      if (error instanceof StepAbortedError || controller.signal.aborted) {
        if (isTerminal(current.status)) return { kind: 'ended', status: current.status, endReason: current.endReason };
        if (current.status === 'paused') {
          await services.store.agentRuns.advanceTurn(current.id, job.turn);
          return { kind: 'paused', nextTurn: job.turn + 1 };
        }
        throw error;
      }
      if (error instanceof NonRetryableError) {
        await services.reporter.error({ run: describeRun(current, services.now()), message: error.userMessage, fatal: true });
        const ended = await endRun(services, current, 'failed', endReasonOf(error.code), error.userMessage);
        return { kind: 'ended', status: ended.status, endReason: ended.endReason };
      }
      throw error;
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (services.inFlight.get(job.runId) === controller) services.inFlight.delete(job.runId);
  }
}

/** A turn kept failing (infrastructure): the run fails with the reason, and people are told. */
export async function failRun(services: EngineServices, runId: string, error: unknown): Promise<void> {
  const run = await services.store.runs.get(runId);
  if (!run || isTerminal(run.status)) return;
  const message = `The run failed: ${describeError(error)}`;
  await services.reporter.error({ run: describeRun(run, services.now()), message, fatal: true });
  await endRun(services, run, 'failed', 'error', message);
}
