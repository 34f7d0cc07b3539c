import type { Run } from '../../db/index.js';
import { activeSeconds } from '../run-view.js';

export type BudgetEnd = 'budget_evals' | 'budget_steps' | 'budget_usd' | 'budget_time';

/**
 * Which budget, if any, is spent. Evaluations end the run once the last allowed one has been
 * returned to the model; steps and dollars before a model call that would exceed them; wall time
 * counts only time not spent waiting for a question.
 */
export function spentBudget(run: Run, now: Date): BudgetEnd | null {
  if (run.evalsUsed >= run.budgetEvals) return 'budget_evals';
  if (run.stepsUsed >= run.budgetSteps) return 'budget_steps';
  if (run.costUsd >= run.budgetUsd) return 'budget_usd';
  if (activeSeconds(run, now) >= run.budgetSeconds) return 'budget_time';
  return null;
}

export function describeEnd(reason: string | null): string {
  switch (reason) {
    case 'budget_evals':
      return 'the evaluation budget is used up';
    case 'budget_steps':
      return 'the model-step budget is used up';
    case 'budget_usd':
      return 'the dollar budget is used up';
    case 'budget_time':
      return 'the wall-time budget is used up';
    case 'stopped_by_user':
      return 'stopped by a person';
    case 'model_refusal':
      return 'the model refused to continue';
    case 'spend_limit':
      return 'the Anthropic spend limit was reached';
    case 'credit_balance':
      return 'the Anthropic credit balance is too low';
    case 'quota':
      return 'the Anthropic quota is used up';
    case 'model_stalled':
      return "the model API's response kept stalling";
    case 'converged':
      return 'converged: the agent kept stopping or claiming a limit with no new evaluation in between';
    case 'no_evaluation':
      return 'the agent made too many model requests without evaluating a candidate';
    case 'interrupted':
      return 'interrupted in the terminal (Ctrl-C)';
    default:
      return reason ?? 'ended';
  }
}
