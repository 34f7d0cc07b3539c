import type { Question } from '../../db/index.js';
import { detectDecision, type Decision } from '../decisions/detect.js';
import type { DecisionTrigger } from '../decisions/triggers.js';
import type { StoredMessage } from '../context/messages.js';
import type { QuestionReport } from '../reporter.js';
import { countedBestOfRun, describeRun } from '../run-view.js';
import { detailsOf, headlineOf } from '../evaluation/summary.js';
import { textOf } from './session.js';
import { transitionRun } from './services.js';
import { patchState, refreshRun, type TurnContext } from './turn-context.js';

/** Asked when the bank has no question that fits (an empty or broken bank): a question, no information. */
export const FALLBACK_QUESTION = { bankId: 'builtin:reconsider', text: 'What assumption behind your current approach have you not tested yet?' };

/** Looks for a decision point after a step; records that the latest assistant text was checked. */
export async function checkForDecision(ctx: TurnContext, rows: StoredMessage[], options: { endedWithoutToolCall: boolean }): Promise<Decision | null> {
  const evaluations = (await ctx.store.evaluations.forRun(ctx.run.id)).filter((e) => e.status !== 'pending');
  const lastAssistant = [...rows].reverse().find((r) => r.role === 'assistant');
  const unchecked = lastAssistant && lastAssistant.seq > ctx.state.lastClaimMessageSeq ? lastAssistant : undefined;
  const decision = detectDecision({
    evaluations,
    runScenarios: ctx.state.scenarios,
    goalVs: ctx.task.task.goal.vs,
    target: ctx.run.target,
    targetAnnounced: ctx.state.targetAnnounced,
    lastDecisionEvalSeq: ctx.state.lastDecisionEvalSeq,
    plateauEvals: ctx.config.agent.decisions.plateauEvals,
    failingEvals: ctx.config.agent.decisions.failingEvals,
    assistantText: unchecked ? textOf(unchecked) : null,
    endedWithoutToolCall: options.endedWithoutToolCall,
  });
  if (unchecked) await patchState(ctx, { lastClaimMessageSeq: unchecked.seq });
  return decision;
}

/**
 * The run reaches a decision point: it waits (holding no worker) until a person's question arrives
 * or the deadline passes; in autonomous mode the bank answers on the next turn, at once.
 */
export async function enterDecision(ctx: TurnContext, decision: Decision): Promise<{ deadline: Date | null }> {
  const now = ctx.now();
  const deadline = ctx.run.autonomous ? null : new Date(now.getTime() + ctx.run.questionTimeoutSeconds * 1000);
  const card = await openDecisionCard(ctx, decision.trigger, now);
  await patchState(ctx, {
    decision: { id: card.id, trigger: decision.trigger, reason: decision.reason, evidence: decision.evidence, at: now.toISOString(), deadline: deadline?.toISOString() ?? null },
    decisionCount: card.seq,
    lastDecisionEvalSeq: ctx.run.evalsUsed,
    ...(decision.trigger === 'target_reached' ? { targetAnnounced: ctx.run.target } : {}),
  });
  const moved = await transitionRun(ctx, ctx.run, 'waiting');
  if (moved) await refreshRun(ctx);
  await ctx.reporter.decisionPoint({
    run: describeRun(ctx.run, now),
    decision: { id: card.id, trigger: decision.trigger, reason: decision.reason, evidence: decision.evidence, deadline, cited: await citedEvaluations(ctx, decision) },
  });
  return { deadline };
}

/** The evaluations a decision point's figures come from: the counted best, a quick run's best, the latest. */
async function citedEvaluations(ctx: TurnContext, decision: Decision): Promise<{ seq: number; headline: string; details: string }[]> {
  const evaluations = (await ctx.store.evaluations.forRun(ctx.run.id)).filter((e) => e.status !== 'pending' && e.seq != null);
  const wanted = new Set([decision.evidence.best_evaluation, decision.evidence.quick_best_evaluation, evaluations.at(-1)?.seq].filter((s): s is number => typeof s === 'number'));
  return evaluations.filter((e) => wanted.has(e.seq!)).map((e) => ({ seq: e.seq!, headline: headlineOf(e), details: detailsOf(e) }));
}

/**
 * The card of the run's next decision point, `<run>.d<n>`: an answer names it, so it reaches this
 * decision point and no other. A crash between opening it and recording it in the state reopens the
 * same card (same n), never a second one.
 */
export async function openDecisionCard(ctx: Pick<TurnContext, 'store' | 'run' | 'state'>, trigger: DecisionTrigger, at: Date): Promise<{ id: string; seq: number }> {
  const seq = ctx.state.decisionCount + 1;
  const id = `${ctx.run.id}.d${seq}`;
  await ctx.store.decisionCards.open({ id, runId: ctx.run.id, seq, trigger, openedAt: at });
  return { id, seq };
}

function questionBlocks(questions: Question[]): unknown[] {
  return questions.map((q) => ({
    type: 'text',
    // A person's answer to a card names the card, so the agent knows which decision point it answers.
    text:
      q.source === 'human'
        ? `Question from ${q.author}${q.decisionId ? ` (answering decision ${q.decisionId})` : ''}: ${q.text}`
        : `Question (from the question bank): ${q.text}`,
  }));
}

function report(q: Question): QuestionReport {
  return { id: q.id, source: q.source, author: q.author, bankId: q.bankId, text: q.text, trigger: (q.trigger as DecisionTrigger | null) ?? null, decisionId: q.decisionId };
}

async function deliver(
  ctx: TurnContext,
  rows: StoredMessage[],
  trigger: DecisionTrigger | null,
  evidence: Record<string, unknown> | null,
  bank: { bankId: string; text: string; evidence: Record<string, unknown> } | null,
): Promise<Question[]> {
  const seq = rows.length === 0 ? 0 : rows.at(-1)!.seq + 1;
  const delivered = await ctx.store.agentRuns.deliverQuestions(
    ctx.run.id,
    seq,
    // The counted best (src/harness/counted-best.ts); attribution recomputes it from the history.
    { evalSeqAtAsk: ctx.run.evalsUsed, bestBefore: countedBestOfRun(ctx.run)?.speedupVsBaseline ?? null, trigger, evidence, decisionId: trigger ? (ctx.state.decision?.id ?? null) : null },
    bank ? { source: 'bank', bankId: bank.bankId, text: bank.text, author: 'bank', trigger, evidence: { ...(evidence ?? {}), ...bank.evidence } } : null,
    questionBlocks,
  );
  if (delivered.length > 0) rows.push({ seq, role: 'user', content: questionBlocks(delivered) });
  // A person steering is not the bank cycling: their question starts the convergence count afresh.
  if (delivered.some((q) => q.source === 'human') && ctx.state.stopStreak > 0) await patchState(ctx, { stopStreak: 0 });
  for (const q of delivered) await ctx.reporter.questionAsked({ run: describeRun(ctx.run, ctx.now()), question: report(q) });
  return delivered;
}

/** Delivers people's questions that arrived outside a decision point (turn boundary), in order. */
export async function deliverPendingQuestions(ctx: TurnContext, rows: StoredMessage[]): Promise<number> {
  const pending = await ctx.store.agentRuns.pendingQuestions(ctx.run.id, null);
  if (pending.length === 0) return 0;
  return (await deliver(ctx, rows, null, null, null)).length;
}

/**
 * Settles a pending decision point: a person's question first; else the bank's when the deadline
 * passed, the run is autonomous or someone asked for the bank; else keep waiting.
 */
export async function resolveDecision(ctx: TurnContext, rows: StoredMessage[]): Promise<{ kind: 'answered' } | { kind: 'wait'; deadline: Date }> {
  const decision = ctx.state.decision!;
  const now = ctx.now();
  const deadline = decision.deadline ? new Date(decision.deadline) : null;
  const pending = await ctx.store.agentRuns.pendingQuestions(ctx.run.id, decision.id);
  const bankRequested = ctx.state.bankRequestedAt !== null && ctx.state.bankRequestedAt >= decision.at;
  let delivered: Question[] = [];
  if (pending.length > 0) {
    delivered = await deliver(ctx, rows, decision.trigger, decision.evidence, null);
  } else if (ctx.run.autonomous || !deadline || deadline <= now || bankRequested) {
    const all = await ctx.store.questions.forRun(ctx.run.id);
    const pick =
      (await ctx.questions.pick({
        runId: ctx.run.id,
        trigger: decision.trigger,
        target: ctx.run.target,
        evaluations: (await ctx.store.evaluations.forRun(ctx.run.id)).filter((e) => e.status !== 'pending'),
        askedInRun: all.filter((q) => q.source === 'bank' && q.bankId).map((q) => q.bankId!),
        seed: `${ctx.run.id}:${all.length}`,
      })) ?? { ...FALLBACK_QUESTION, evidence: {} };
    delivered = await deliver(ctx, rows, decision.trigger, decision.evidence, pick);
  }
  if (delivered.length === 0) {
    if (deadline && deadline > now) return { kind: 'wait', deadline };
    throw new Error('no question could be delivered at a decision point');
  }
  await patchState(ctx, { decision: null, waitedMs: ctx.state.waitedMs + Math.max(0, now.getTime() - Date.parse(decision.at)) });
  if (ctx.run.status === 'waiting') {
    const moved = await transitionRun(ctx, ctx.run, 'running');
    if (moved) await refreshRun(ctx);
  }
  return { kind: 'answered' };
}
