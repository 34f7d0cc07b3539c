import type { Config, Env } from '../config/index.js';
import type { Logger } from '../core/logger.js';
import type { Store } from '../db/index.js';
// The in-process dispatcher's own module, not the queue's index: `kernelseek run` loads no BullMQ.
import { createInProcessDispatcher } from '../queue/in-process-dispatcher.js';
import type { Dispatcher } from '../queue/index.js';
import { createBankQuestionSource } from './decisions/bank-source.js';
import { createAgentEngine, type AgentEngine, type AgentEngineDeps } from './engine.js';
import { createLocalTurnScheduler, type LocalTurnScheduler } from './scheduler.js';

export interface LocalAgent {
  engine: AgentEngine;
  scheduler: LocalTurnScheduler;
  dispatcher: Dispatcher;
  /** Stops scheduling turns, then closes the engine and the dispatcher. */
  close(): Promise<void>;
}

/**
 * An engine that runs wholly in this process (`kernelseek run`, tests, benchmarks): turns on a
 * local scheduler, evaluations through the in-process dispatcher, bank questions from the store.
 */
export function createLocalAgent(options: {
  config: Config;
  store: Store;
  logger: Logger;
  /** The environment the harness processes get. */
  dispatcherEnv: Env;
  reporter?: AgentEngineDeps['reporter'];
  retryPolicy?: AgentEngineDeps['retryPolicy'];
  turnRetries?: { retries?: number; retryDelayMs?: number };
  /** The question bank's folder (default: the checkout's questions/). */
  bankDir?: string;
}): LocalAgent {
  const { config, store, logger } = options;
  const scheduler = createLocalTurnScheduler({ logger, ...options.turnRetries });
  const dispatcher = createInProcessDispatcher(config, { env: options.dispatcherEnv });
  const engine = createAgentEngine({
    config,
    store,
    dispatcher,
    scheduler,
    questions: createBankQuestionSource({ store, ...(options.bankDir ? { dir: options.bankDir } : {}) }),
    logger,
    ...(options.reporter ? { reporter: options.reporter } : {}),
    ...(options.retryPolicy ? { retryPolicy: options.retryPolicy } : {}),
  });
  scheduler.attach(engine);
  return {
    engine,
    scheduler,
    dispatcher,
    async close() {
      scheduler.close();
      await engine.close();
      await dispatcher.close();
    },
  };
}
