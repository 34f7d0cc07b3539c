import type { Config } from '../config/index.js';
import { UserInputError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { Store } from '../db/index.js';
import type { Dispatcher } from '../queue/dispatcher.js';
import * as control from './control.js';
import type { QuestionSource } from './decisions/question-source.js';
import { createAnthropicModelClient } from './model/anthropic-client.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './model/model-retry.js';
import type { ModelClient } from './model/types.js';
import { guardReporter, noopReporter, type RunReporter } from './reporter.js';
import type { StartRunParams } from './run-params.js';
import { describeRun, type RunView } from './run-view.js';
import type { TurnJob, TurnScheduler } from './scheduler.js';
import { failRun, processTurn, type TurnOutcome } from './turn/run-turn.js';
import type { EngineServices } from './turn/services.js';
import type { WorkerAvailability } from './worker-wait.js';

export interface AgentEngineDeps {
  config: Config;
  store: Store;
  dispatcher: Dispatcher;
  scheduler: TurnScheduler;
  /** Where bank questions come from (the question bank in production). */
  questions: QuestionSource;
  reporter?: RunReporter;
  logger?: Logger;
  /** Default: the Anthropic SDK client built from config.anthropic. */
  model?: ModelClient;
  retryPolicy?: Partial<RetryPolicy>;
  now?: () => Date;
  /** The gpu-workers' availability (serve): a run whose job no worker can take says so. */
  workers?: WorkerAvailability;
}

/**
 * The run-control API: everything Slack, the terminal and tests do with runs goes through here.
 * Methods throw UserInputError (with a message safe to show) for a request that cannot be honoured:
 * an unknown or finished run, a bad parameter.
 */
export interface AgentEngine {
  /** Creates the run, its workspace and first message, and schedules its first turn. */
  startRun(params: StartRunParams): Promise<RunView>;
  /** Ends the run (status stopped), aborting a model call or tool in flight in this process. */
  stopRun(runId: string, options?: { by?: string; reason?: 'stopped_by_user' | 'interrupted' }): Promise<RunView>;
  /** Pauses at the next step boundary; a paused run holds no worker. */
  pauseRun(runId: string): Promise<RunView>;
  resumeRun(runId: string): Promise<RunView>;
  /** Adds to the run's budgets (positive amounts only). */
  addBudget(runId: string, delta: { evals?: number; steps?: number; usd?: number; seconds?: number }): Promise<RunView>;
  /**
   * A person's question. At a decision point it is the next user message; at any other time it is
   * delivered at the next turn boundary, in arrival order, exactly once. The idempotency key (e.g.
   * the Slack message ts) makes a redelivered event harmless. With `decisionId` it answers that
   * decision card only: refused with a DecisionClosedError once the card has closed.
   */
  submitQuestion(runId: string, input: { text: string; author: string; idempotencyKey: string; decisionId?: string | undefined }): Promise<control.SubmittedQuestion>;
  /** At a decision point: do not wait for the timeout, let the bank ask now. */
  askFromBankNow(runId: string): Promise<RunView>;
  getStatus(runId: string): Promise<RunView>;
  /** The `agent-turn` job processor. */
  processTurn(job: TurnJob, options?: { signal?: AbortSignal }): Promise<TurnOutcome>;
  /** Marks a run failed after its turn kept failing (the queue's final-failure hook). */
  failRun(runId: string, error: unknown): Promise<void>;
  /** Re-schedules the current turn of every live run another process does not host (call when a worker starts). */
  resumeLiveRuns(): Promise<string[]>;
  /**
   * Continues one run whatever stopped it, if it can go on (`kernelseek run --resume`), with any
   * settings given anew (autonomy, budgets, model, target, question timeout); the rest are kept.
   */
  continueRun(runId: string, settings?: control.RunSettings): Promise<RunView>;
  /** Aborts this process's in-flight turns (their runs resume elsewhere or on restart). */
  close(): Promise<void>;
}

export function createAgentEngine(deps: AgentEngineDeps): AgentEngine {
  const logger = deps.logger ?? silentLogger;
  const services: EngineServices = {
    config: deps.config,
    store: deps.store,
    dispatcher: deps.dispatcher,
    scheduler: deps.scheduler,
    reporter: guardReporter(deps.reporter ?? noopReporter, logger),
    logger,
    model: deps.model ?? createAnthropicModelClient(deps.config.anthropic, { logger, idleTimeoutMs: deps.config.agent.stepLimits.idleTimeoutSeconds * 1000 }),
    questions: deps.questions,
    retryPolicy: { ...DEFAULT_RETRY_POLICY, ...deps.retryPolicy },
    now: deps.now ?? (() => new Date()),
    inFlight: new Map(),
    ...(deps.workers ? { workers: deps.workers } : {}),
  };
  return {
    startRun: (params) => control.startRun(services, params),
    stopRun: (runId, options) => control.stopRun(services, runId, options),
    pauseRun: (runId) => control.pauseRun(services, runId),
    resumeRun: (runId) => control.resumeRun(services, runId),
    addBudget: (runId, delta) => control.addBudget(services, runId, delta),
    submitQuestion: (runId, input) => control.submitQuestion(services, runId, input),
    askFromBankNow: (runId) => control.askFromBankNow(services, runId),
    async getStatus(runId) {
      const run = await services.store.runs.get(runId);
      if (!run) throw new UserInputError(`There is no run '${runId}'.`, { code: 'run_unknown' });
      return describeRun(run, services.now());
    },
    processTurn: (job, options) => processTurn(services, job, options?.signal),
    failRun: (runId, error) => failRun(services, runId, error),
    resumeLiveRuns: () => control.resumeLiveRuns(services),
    continueRun: (runId, settings) => control.continueRun(services, runId, settings),
    async close() {
      for (const controller of services.inFlight.values()) controller.abort();
    },
  };
}
