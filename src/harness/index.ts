/** The TypeScript side of the harness: tasks, the result schema, and the runner that calls Python. */
export { findTask, loadTaskCatalog, expandScenarios, formatProblem, type LoadedTask, type Scenario } from './tasks.js';
export type { EvaluationOptions, EvaluationOutcome, EvaluationProgress, ExecutorInfo } from './evaluation.js';
export { EvalResultSchema, speedupVsBestPeer, type EvalOutcome, type EvalResult, type ScenarioResult, type EvalStatus } from './result.js';
export { runHarness, harnessEnvironment, DEFAULT_EVAL_TIMEOUT_SECONDS, type HarnessRunRequest, type RunHarnessOptions } from './runner.js';
export { resolvePython, readHarnessVersion } from './runner-python.js';
export { parseProgressLine } from './runner-progress.js';
export { runGuarded, killGroup } from './process-group.js';
