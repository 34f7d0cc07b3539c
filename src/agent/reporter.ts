import type { Logger } from '../core/logger.js';
import type { RunStatus } from '../db/index.js';
import type { EvaluationProgress } from '../harness/evaluation.js';
import type { DecisionTrigger } from './decisions/triggers.js';
import type { RunView } from './run-view.js';

/**
 * How a run tells the outside world what happens, so the same engine drives a Slack thread (one
 * status card edited in place + a few thread messages), a terminal and tests. Every method receives
 * the run's current view (enough to redraw a status card). Implementations must be quick and must
 * not throw; the engine logs and ignores a reporter's failure (a Slack outage never stops a run).
 */
export interface RunReporter {
  /** The run moved between states (queued → running → waiting → …). Redraw the status card. */
  statusChanged(event: { run: RunView; from: RunStatus; to: RunStatus }): void | Promise<void>;
  /**
   * A model step is about to be sent: the agent is thinking until its response comes back. Optional:
   * a reporter that shows no live status (the terminal) leaves it out.
   */
  stepStarted?(event: { run: RunView; step: number }): void | Promise<void>;
  /** One model step finished (step count, tokens and cost changed). Coalesce: it is frequent. */
  stepFinished(event: { run: RunView; step: number; stopReason: string | null; costUsd: number; toolCalls: string[] }): void | Promise<void>;
  /** A tool call started (terminal progress lines; Slack may ignore it). */
  toolStarted(event: { run: RunView; name: string; summary: string }): void | Promise<void>;
  /**
   * A running evaluation moved on (compiled, a scenario finished, …): the harness's own progress
   * events, as the dispatcher relays them. Frequent; a terminal redraws one line, Slack ignores it.
   */
  evaluationProgress(event: { run: RunView; seq: number; progress: EvaluationProgress }): void | Promise<void>;
  /** An evaluation of a candidate finished (any outcome). */
  evaluationFinished(event: { run: RunView; evaluation: EvaluationReport }): void | Promise<void>;
  /** A correct candidate beat the previous best. Deserves a thread message. */
  newBest(event: { run: RunView; evaluation: EvaluationReport; previousSpeedup: number | null }): void | Promise<void>;
  /**
   * A decision point: the run now waits for a question until `deadline` (null: the bank answers at
   * once, autonomous mode). Post a decision card with the evidence and *Ask from the bank* / *Stop*.
   */
  decisionPoint(event: { run: RunView; decision: DecisionReport }): void | Promise<void>;
  /** A question was delivered to the agent (a person's, or the bank's). */
  questionAsked(event: { run: RunView; question: QuestionReport }): void | Promise<void>;
  /** Something went wrong. `fatal`: the run ended because of it. `message` is safe to show. */
  error(event: { run: RunView; message: string; fatal: boolean }): void | Promise<void>;
  /** The run reached a terminal state (finished, stopped, failed). Post the final summary. */
  runFinished(event: { run: RunView; summary: RunSummary }): void | Promise<void>;
}

export interface EvaluationReport {
  id: number;
  seq: number;
  status: string;
  correct: boolean;
  scenarios: { total: number; correct: number };
  /** The set it ran on: `all` (counts) or `quick` (a quick-subset figure: never counted, said so). */
  scenarioSet?: string;
  speedupVsBaseline: number | null;
  speedupVsBestPeer: number | null;
  bestPeer: string | null;
  /** Git commit of the workspace holding this candidate. */
  commit: string | null;
  /** One line for people: `eval #3: ok, 24/24 correct, 1.31x baseline, 0.92x torch`. */
  headline: string;
  /** The first lines of why it failed (the compiler's errors, failing scenarios); empty when it passed. */
  failure?: string[];
  /**
   * All of the result as people read it: intervals and verdicts vs the baseline and the peers, the
   * per-scenario table, the compiler's output when it failed (`kernelseek show` prints the same).
   */
  details?: string;
}

export interface DecisionReport {
  /** The decision card's id (`<run>.d<n>`): an answer that names it reaches this decision point only. */
  id: string;
  trigger: DecisionTrigger;
  /** One sentence on what happened, with the measured figures. */
  reason: string;
  /** The measured evidence behind it (also stored on the question that answers it). */
  evidence: Record<string, unknown>;
  /** When the bank answers if no person does; null when it answers at once (autonomous). */
  deadline: Date | null;
  /**
   * The evaluations its figures come from (the counted best, a quick run's best, the latest), each
   * with its whole result as people read it, so a person can open what the card cites.
   */
  cited?: { seq: number; headline: string; details: string }[];
}

export interface QuestionReport {
  id: number;
  source: 'human' | 'bank';
  /** Who asked: a person's id or name, or `bank`. */
  author: string;
  bankId: string | null;
  text: string;
  trigger: DecisionTrigger | null;
  /** The decision card it answered, when it answered one. */
  decisionId: string | null;
}

/** The best of a run on the quick subset, evaluated on the task's every scenario at the run's end. */
export interface FullSetConfirmation {
  /** The harness's status on the full set (`ok`, `incorrect`, ...), or `error` when it could not run. */
  status: string;
  correct: boolean;
  speedupVsBaseline: number | null;
  scenarios: number;
  /** Why, when it is not correct. */
  reason?: string | null;
  /** Against the strongest peer; the interval and verdict vs the baseline; the quick best's seq. */
  speedupVsBestPeer?: number | null;
  ci?: [number, number] | null;
  verdict?: string | null;
  ofSeq?: number | null;
}

export interface RunSummary {
  status: RunStatus;
  endReason: string | null;
  /**
   * The counted best (src/harness/counted-best.ts): full set, correct. The figure a summary calls "the
   * best"; on a quick run, the full-set check of its best when that was correct.
   */
  counted?: null | { seq: number | null; speedupVsBaseline: number; speedupVsBestPeer: number | null; fullSetCheck: boolean };
  /** The run's best kernel (on a quick run, chosen on the quick subset: `scenarioSet` says so). */
  best: null | {
    evaluationSeq: number;
    speedupVsBaseline: number;
    speedupVsBestPeer: number | null;
    /** Where its source was written on this host, and the workspace commit that holds it. */
    file: string;
    commit: string | null;
    /** A run on a subset: how many of the task's scenarios its best was chosen on (null: all of them). */
    scenarioSet?: { evaluated: number; total: number } | null;
    /** A run on a subset: the best evaluated once more on every scenario when the run ended. */
    confirmation?: FullSetConfirmation | null;
  };
  evaluations: number;
  steps: number;
  costUsd: number;
  questions: { human: number; bank: number };
  elapsedSeconds: number;
  /** The run's workspace (its work tree on the host that ran it). */
  workspace: string;
  /**
   * The run's git history, where every evaluated candidate is a commit (tags `eval-<n>`, `best`):
   * `<data dir>/git/<run>`. A path on the server: the terminal shows it, Slack never does.
   */
  gitDir?: string;
  /** The command that exports the best with its evidence (`kernelseek export <run>`). */
  exportCommand?: string;
  error: string | null;
}

/** A reporter that does nothing; spread it to implement only the events you care about. */
export const noopReporter: RunReporter = {
  statusChanged: () => {},
  stepStarted: () => {},
  stepFinished: () => {},
  toolStarted: () => {},
  evaluationProgress: () => {},
  evaluationFinished: () => {},
  newBest: () => {},
  decisionPoint: () => {},
  questionAsked: () => {},
  error: () => {},
  runFinished: () => {},
};

/** Sends every event to each reporter in turn. */
export function composeReporters(...reporters: RunReporter[]): RunReporter {
  const out = {} as Record<keyof RunReporter, (event: never) => Promise<void>>;
  for (const key of Object.keys(noopReporter) as (keyof RunReporter)[]) {
    out[key] = async (event: never) => {
      for (const r of reporters) await (r[key] as ((e: never) => unknown) | undefined)?.(event);
    };
  }
  return out as unknown as RunReporter;
}

/** Wraps a reporter so that its failures are logged, never thrown into the run. */
export function guardReporter(reporter: RunReporter, logger: Logger): RunReporter {
  const out = {} as Record<keyof RunReporter, (event: never) => Promise<void>>;
  for (const key of Object.keys(noopReporter) as (keyof RunReporter)[]) {
    out[key] = async (event: never) => {
      try {
        await (reporter[key] as ((e: never) => unknown) | undefined)?.(event);
      } catch (error) {
        logger.warn({ err: error, event: key }, 'run reporter failed; the run continues');
      }
    };
  }
  return out as unknown as RunReporter;
}
