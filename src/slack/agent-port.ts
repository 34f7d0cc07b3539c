import type { RunStatus } from '../db/index.js';

/**
 * What the Slack app needs from the agent engine, in one place: the run view a status card is drawn
 * from, the reporter events a run emits, and the run-control calls listeners make. These mirror the
 * agent's public API (`src/agent/index.ts`: `RunView`, `RunReporter`, the control API); when that
 * module is merged, this file re-exports its types instead of declaring them, and nothing else in
 * `slack/` changes. `slack/` never reaches into agent internals.
 */

/** A plain snapshot of a run: enough to redraw its status card. */
export interface RunView {
  id: string;
  task: string;
  owner: string;
  origin: 'slack' | 'terminal' | 'api';
  status: RunStatus;
  endReason: string | null;
  model: string;
  arch: string | null;
  autonomous: boolean;
  target: number;
  slack: { channel: string; threadTs: string } | null;
  steps: { used: number; budget: number };
  evaluations: { used: number; budget: number };
  costUsd: { used: number; budget: number };
  elapsedSeconds: { used: number; budget: number };
  best: null | { evaluationId: number; speedupVsBaseline: number; speedupVsBestPeer: number | null };
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** The pending decision point, when the run waits for a question. */
  waitingFor: null | { trigger: string; deadline: string | null };
  createdAt: string;
  finishedAt: string | null;
  error: string | null;
}

export interface EvaluationReport {
  id: number;
  seq: number;
  status: string;
  correct: boolean;
  scenarios: { total: number; correct: number };
  speedupVsBaseline: number | null;
  speedupVsBestPeer: number | null;
  bestPeer: string | null;
  commit: string | null;
  /** One line for people: `eval #3: ok, 24/24 correct, 1.31x baseline, 0.92x torch`. */
  headline: string;
}

export interface DecisionReport {
  trigger: string;
  /** One sentence on what happened, with the measured figures. */
  reason: string;
  evidence: Record<string, unknown>;
  /** When the bank answers if no person does; null: at once (autonomous). */
  deadline: Date | null;
}

export interface QuestionReport {
  id: number;
  source: 'human' | 'bank';
  author: string;
  bankId: string | null;
  text: string;
  trigger: string | null;
}

export interface RunSummary {
  status: RunStatus;
  endReason: string | null;
  best: null | {
    evaluationSeq: number;
    speedupVsBaseline: number;
    speedupVsBestPeer: number | null;
    file: string;
    commit: string | null;
  };
  evaluations: number;
  steps: number;
  costUsd: number;
  questions: { human: number; bank: number };
  elapsedSeconds: number;
  workspace: string;
  error: string | null;
}

/** The events a run reports; the Slack reporter turns them into one status card and a few thread messages. */
export interface RunReporter {
  statusChanged(event: { run: RunView; from: RunStatus; to: RunStatus }): void | Promise<void>;
  stepFinished(event: { run: RunView; step: number; stopReason: string | null; costUsd: number; toolCalls: string[] }): void | Promise<void>;
  toolStarted(event: { run: RunView; name: string; summary: string }): void | Promise<void>;
  evaluationFinished(event: { run: RunView; evaluation: EvaluationReport }): void | Promise<void>;
  newBest(event: { run: RunView; evaluation: EvaluationReport; previousSpeedup: number | null }): void | Promise<void>;
  decisionPoint(event: { run: RunView; decision: DecisionReport }): void | Promise<void>;
  questionAsked(event: { run: RunView; question: QuestionReport }): void | Promise<void>;
  error(event: { run: RunView; message: string; fatal: boolean }): void | Promise<void>;
  runFinished(event: { run: RunView; summary: RunSummary }): void | Promise<void>;
}

/** What a person asks for with `/kernelseek start`. */
export interface StartRequest {
  task: string;
  owner: string;
  slack: { channel: string; threadTs: string };
  target?: number;
  budgetEvals?: number;
  model?: string;
  arch?: string;
  questionTimeoutSeconds?: number;
  autonomous: boolean;
  id?: string;
}

/**
 * The run-control calls Slack makes. Each throws an `AppError` whose `userMessage` says what went
 * wrong in words a person can act on (unknown run, run already finished, …).
 */
export interface RunControl {
  start(request: StartRequest): Promise<RunView>;
  stop(runId: string, by: string): Promise<RunView>;
  pause(runId: string, by: string): Promise<RunView>;
  resume(runId: string, by: string): Promise<RunView>;
  addBudget(runId: string, extra: { evals: number }, by: string): Promise<RunView>;
  /** Stores a person's question; `externalId` makes a redelivery a no-op. Delivered at the next turn boundary. */
  submitQuestion(input: { runId: string; text: string; author: string; externalId: string }): Promise<{ questionId: number; created: boolean }>;
  /** The pending decision point takes a bank question now. */
  askBankNow(runId: string, by: string): Promise<void>;
  status(runId: string): Promise<RunView | undefined>;
}
