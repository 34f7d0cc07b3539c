import type { Evaluation } from '../../db/index.js';
import type { DecisionTrigger } from './triggers.js';

/** A question chosen from the bank for a decision point. */
export interface BankPick {
  bankId: string;
  /** The question with its placeholders filled from the run's measurements. */
  text: string;
  /** The evidence the text states (stored with the question). */
  evidence: Record<string, unknown>;
}

/**
 * Where bank questions come from. The engine asks through this one seam, so the bank's selection
 * policy (src/questions) stays the bank's business.
 */
export interface QuestionSource {
  pick(input: {
    runId: string;
    trigger: DecisionTrigger;
    target: number;
    evaluations: Evaluation[];
    /** Bank ids already asked in this run, oldest first. */
    askedInRun: string[];
    seed: string;
  }): Promise<BankPick | null>;
}
