/**
 * What the terminal commands (`kernelseek run`, `kernelseek runs`) use of the agent: the local agent
 * with its in-process dispatcher and scheduler, the reporters, run views and the run lease. A
 * subset of agent/index.ts without the queue-backed pieces (turn queue, reconciler, worker
 * availability), so that these commands start without loading BullMQ or ioredis (issue 16).
 */
export { createLocalAgent, type LocalAgent } from './local.js';
export { noopReporter, composeReporters, type RunReporter, type RunSummary } from './reporter.js';
export { describeRun, isInterrupted, type RunView } from './run-view.js';
export { detailsOf, headlineOf } from './evaluation/summary.js';
export type { StartRunParams } from './run-params.js';
export type { RunSettings } from './control.js';
export { createTerminalReporter, summaryLines } from './terminal/terminal-reporter.js';
export { listenForQuestions } from './terminal/stdin-questions.js';
export { holdRunLease, terminalLeaseOwner, type RunLease } from './lease.js';
