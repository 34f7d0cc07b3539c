/**
 * An agent worker in its own process, for crash tests: it opens the test's PostgreSQL database,
 * resumes every live run and works on it until it is killed (or the runs end). Environment:
 * KS_TEST_DB_URL, KS_TEST_DATA_DIR, KS_TEST_BASE_URL.
 */
import { createAgentEngine, createBankQuestionSource, createLocalTurnScheduler } from '../../../src/agent/index.js';
import { silentLogger } from '../../../src/core/logger.js';
import { createStore, openDatabase } from '../../../src/db/index.js';
import { createInProcessDispatcher } from '../../../src/queue/index.js';
import { testConfig } from '../test-config.js';

const config = testConfig(process.env.KS_TEST_DATA_DIR!, process.env.KS_TEST_BASE_URL!);
const handle = await openDatabase({ kind: 'postgres', url: process.env.KS_TEST_DB_URL! });
const store = createStore(handle.db);
const scheduler = createLocalTurnScheduler({ logger: silentLogger, retries: 0 });
const engine = createAgentEngine({
  config,
  store,
  dispatcher: createInProcessDispatcher(config, { env: { PATH: process.env.PATH } }),
  scheduler,
  questions: createBankQuestionSource({ store }),
  retryPolicy: { baseDelayMs: 20, maxDelayMs: 200 },
});
scheduler.attach(engine);
const runs = await engine.resumeLiveRuns();
process.stdout.write(`resumed ${runs.join(',')}\n`);
// Stay alive until killed; a test that lets the run end kills us too.
setInterval(() => {}, 1000);
