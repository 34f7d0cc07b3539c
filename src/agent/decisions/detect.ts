import type { Evaluation } from '../../db/index.js';
import { countedBest } from '../../harness/counted-best.js';
import { BASELINE_SPEEDUP, beatsIncumbent, gainFiguresOf } from '../../harness/significance.js';
import { findLimitClaim } from './claims.js';
import type { DecisionTrigger } from './triggers.js';

/** `result` (the harness's JSON) carries the interval the gain rule reads; rows without one compare point figures. */
export type EvaluationFacts = Pick<Evaluation, 'seq' | 'status' | 'correct' | 'speedupVsBaseline' | 'speedupVsBestPeer' | 'scenarios'> &
  Partial<Pick<Evaluation, 'result'>>;

export interface DecisionInput {
  /** The run's finished evaluations, in order. */
  evaluations: EvaluationFacts[];
  runScenarios: 'quick' | 'all';
  goalVs: 'best_peer' | 'baseline';
  target: number;
  targetAnnounced: number | null;
  /** Streaks count only evaluations after this seq (the last decision point's). */
  lastDecisionEvalSeq: number;
  plateauEvals: number;
  failingEvals: number;
  /** Text of the latest assistant message, when it has not been checked for a claim yet. */
  assistantText: string | null;
  /** The model ended its turn without calling a tool. */
  endedWithoutToolCall: boolean;
}

export interface Decision {
  trigger: DecisionTrigger;
  reason: string;
  evidence: Record<string, unknown>;
}

const counts = (e: EvaluationFacts, runScenarios: string) => e.status === 'ok' && e.correct === true && (e.scenarios === 'all' || e.scenarios === runScenarios);
const x = (v: number | null | undefined) => (v == null ? '-' : `${v.toFixed(3)}x`);

/**
 * Streaks and bests over the evaluation history (pure; also shown as decision evidence). A candidate
 * becomes the best only when it beats the incumbent (the baseline before any) by the harness's
 * interval, not by a point figure that noise can lift (src/harness/significance.ts).
 */
export function evaluationFacts(input: Pick<DecisionInput, 'evaluations' | 'runScenarios' | 'goalVs' | 'lastDecisionEvalSeq'>) {
  let best: EvaluationFacts | null = null;
  let lastGainSeq = 0;
  for (const e of input.evaluations) {
    if (counts(e, input.runScenarios) && beatsIncumbent(gainFiguresOf(e), best?.speedupVsBaseline ?? BASELINE_SPEEDUP)) {
      best = e;
      lastGainSeq = e.seq ?? 0;
    }
  }
  const since = Math.max(lastGainSeq, input.lastDecisionEvalSeq);
  const evalsSinceGain = input.evaluations.filter((e) => (e.seq ?? 0) > since).length;
  let failingStreak = 0;
  for (const e of [...input.evaluations].reverse()) {
    if ((e.seq ?? 0) <= input.lastDecisionEvalSeq || counts(e, input.runScenarios) || (e.status === 'ok' && e.correct)) break;
    failingStreak++;
  }
  const bestGoal = best ? (input.goalVs === 'best_peer' ? best.speedupVsBestPeer : best.speedupVsBaseline) : null;
  return {
    best,
    bestGoal,
    evalsSinceGain,
    failingStreak,
    lastStatus: input.evaluations.at(-1)?.status ?? null,
  };
}

/**
 * Whether the run has reached a decision point (DESIGN §7), and which. When several apply, the most
 * specific wins: target reached, then a claimed limit, then a stop, then failing, then plateau.
 */
export function detectDecision(input: DecisionInput): Decision | null {
  const facts = evaluationFacts(input);
  // The figures a card calls "the best" are the counted best (src/harness/counted-best.ts); a quick
  // run's best on its subset steers it and is shown as such, labelled quick.
  const counted = countedBest(input.evaluations);
  const quick = input.runScenarios === 'quick' && facts.best ? facts.best : null;
  const evidence = {
    evaluations: input.evaluations.length,
    best_speedup_vs_baseline: counted?.speedupVsBaseline ?? null,
    best_speedup_vs_peer: counted?.speedupVsBestPeer ?? null,
    best_evaluation: counted?.seq ?? null,
    ...(quick ? { quick_best_speedup_vs_baseline: quick.speedupVsBaseline, quick_best_evaluation: quick.seq } : {}),
    evals_since_gain: facts.evalsSinceGain,
    failing_streak: facts.failingStreak,
    target: input.target,
  };
  const goalName = input.goalVs === 'best_peer' ? 'the strongest peer' : 'the baseline';
  const onQuick = input.runScenarios === 'quick' ? ' on the quick subset (not counted until it is evaluated on every scenario)' : '';
  if (facts.bestGoal != null && facts.bestGoal >= input.target && !(input.targetAnnounced != null && input.targetAnnounced >= input.target)) {
    return {
      trigger: 'target_reached',
      reason: `Evaluation #${facts.best!.seq} reached ${x(facts.bestGoal)} vs ${goalName}${onQuick}, meeting the target of ${input.target}x.`,
      evidence,
    };
  }
  const claim = input.assistantText ? findLimitClaim(input.assistantText) : null;
  if (claim) {
    return { trigger: 'claimed_limit', reason: `The agent claims a limit: “${claim}”`, evidence: { ...evidence, claim } };
  }
  if (input.endedWithoutToolCall) {
    return { trigger: 'stopped', reason: 'The agent ended its turn without calling a tool.', evidence };
  }
  if (facts.failingStreak >= input.failingEvals) {
    return {
      trigger: 'failing',
      reason: `${facts.failingStreak} candidates in a row failed or were incorrect (last: ${facts.lastStatus}).`,
      evidence: { ...evidence, last_status: facts.lastStatus },
    };
  }
  if (facts.evalsSinceGain >= input.plateauEvals) {
    return {
      trigger: 'plateau',
      reason: `${facts.evalsSinceGain} evaluations without a new best (best: ${facts.best ? `#${facts.best.seq} at ${x(facts.best.speedupVsBaseline)} vs baseline${input.runScenarios === 'quick' ? ' on the quick subset, not counted' : ''}` : 'none better than the baseline yet'}).`,
      evidence,
    };
  }
  return null;
}
