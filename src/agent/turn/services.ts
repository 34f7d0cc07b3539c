import type { Config } from '../../config/index.js';
import type { Logger } from '../../core/logger.js';
import type { Run, RunStatus, Store } from '../../db/index.js';
import type { Dispatcher } from '../../queue/dispatcher.js';
import type { QuestionSource } from '../decisions/question-source.js';
import type { RetryPolicy } from '../model/model-retry.js';
import type { ModelClient } from '../model/types.js';
import type { RunReporter } from '../reporter.js';
import { describeRun } from '../run-view.js';
import type { TurnScheduler } from '../scheduler.js';
import type { WorkerAvailability } from '../worker-wait.js';

/** What the engine runs on; one set per process, shared by every run it advances. */
export interface EngineServices {
  config: Config;
  store: Store;
  dispatcher: Dispatcher;
  scheduler: TurnScheduler;
  /** Already guarded: its failures are logged, never thrown. */
  reporter: RunReporter;
  logger: Logger;
  model: ModelClient;
  questions: QuestionSource;
  retryPolicy: RetryPolicy;
  now: () => Date;
  /** Who can take evaluation and gpu_bash jobs (serve); absent when they run in this process. */
  workers?: WorkerAvailability;
  /** In-flight turns of this process, so stop/pause can abort their model call or tool. */
  inFlight: Map<string, AbortController>;
}

/** Moves a run and tells the reporter; undefined when the move was illegal or lost a race. */
export async function transitionRun(
  services: EngineServices,
  run: Run,
  to: RunStatus,
  patch: Partial<Pick<Run, 'endReason' | 'error'>> = {},
  statePatch?: Record<string, unknown>,
): Promise<Run | undefined> {
  if (run.status === to) return run;
  const moved = await services.store.runs.transition(run.id, to, patch, statePatch);
  if (moved) await services.reporter.statusChanged({ run: describeRun(moved, services.now()), from: run.status, to });
  return moved;
}
