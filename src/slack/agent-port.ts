/**
 * What the Slack app uses of the agent engine, in one place and only through `src/agent/index.ts`:
 * the run view a status card is drawn from, the reporter events a run emits, and the run-control
 * calls listeners make. `slack/` never reaches into agent internals.
 */
import type { AgentEngine } from '../agent/index.js';

export type { RunView, RunReporter, EvaluationReport, DecisionReport, QuestionReport, RunSummary, StartRunParams, DecisionTrigger } from '../agent/index.js';
export { describeRun, describeEnd, detailsOf, failureOf, headlineOf, MAX_QUESTION_CHARS, DecisionClosedError } from '../agent/index.js';

/**
 * The run-control calls Slack makes. Each throws a `UserInputError` whose `userMessage` says what
 * went wrong in words a person can act on (unknown run, run already finished, …).
 */
export type RunControl = Pick<
  AgentEngine,
  'startRun' | 'stopRun' | 'pauseRun' | 'resumeRun' | 'addBudget' | 'submitQuestion' | 'askFromBankNow' | 'getStatus'
>;
