/**
 * The agent engine (DESIGN §6, §7): a question-driven coding agent that runs as short persisted
 * turns. Slack, the terminal and tests use only what this file exports; see docs/agent.md.
 *
 *   const scheduler = createLocalTurnScheduler({ logger });          // or the BullMQ agent-turn queue
 *   const engine = createAgentEngine({ config, store, dispatcher, scheduler, questions, reporter });
 *   scheduler.attach(engine);
 *   const run = await engine.startRun({ task: 'cpu_softmax', owner: 'alice', origin: 'terminal' });
 *   await engine.submitQuestion(run.id, { text: 'What limits you?', author: 'alice', idempotencyKey: 'k1' });
 */
export { createAgentEngine, type AgentEngine, type AgentEngineDeps } from './engine.js';
export type { RunSettings, SubmittedQuestion } from './control.js';
export { MAX_QUESTION_CHARS, DecisionClosedError } from './control.js';
export {
  noopReporter,
  composeReporters,
  guardReporter,
  type RunReporter,
  type EvaluationReport,
  type DecisionReport,
  type QuestionReport,
  type RunSummary,
} from './reporter.js';
export { describeRun, type RunView } from './run-view.js';
export { StartRunParamsSchema, DEFAULT_BUDGETS, DEFAULT_QUESTION_TIMEOUT_SECONDS, type StartRunParams, type RunParams } from './run-params.js';
export { createLocalTurnScheduler, type TurnScheduler, type TurnJob, type TurnProcessor, type LocalTurnScheduler } from './scheduler.js';
export { DECISION_TRIGGERS, type DecisionTrigger } from './decisions/triggers.js';
export type { QuestionSource, BankPick } from './decisions/question-source.js';
export type { TurnOutcome } from './turn/run-turn.js';
export { describeEnd } from './turn/budgets.js';
export { detailsOf, failureOf, headlineOf } from './evaluation/summary.js';
export type { ModelClient } from './model/types.js';
export { exportTrace, type TraceOptions } from './trace/export-trace.js';
export { createBankQuestionSource } from './decisions/bank-source.js';
export { createTerminalReporter, summaryLines } from './terminal/terminal-reporter.js';
export { listenForQuestions } from './terminal/stdin-questions.js';
export { createQueueTurnScheduler, startAgentTurnWorker } from './queue-turns.js';
export { startRunReconciler, RECONCILE_QUEUE, type RunReconciler } from './reconciler.js';
export { createLocalAgent, type LocalAgent } from './local.js';
export { holdRunLease, terminalLeaseOwner, type RunLease } from './lease.js';
export { isInterrupted } from './run-view.js';
export { createRedisWorkerAvailability } from './worker-availability.js';
export { workerWait, type WorkerAvailability } from './worker-wait.js';
