/**
 * An agent worker in its own process, for crash tests: it opens the test's PostgreSQL database,
 * resumes every live run and works on it until it is killed (or the runs end). Environment:
 * KS_TEST_DB_URL, KS_TEST_DATA_DIR, KS_TEST_BASE_URL.
 */
import { createLocalAgent } from '../../../src/agent/index.js';
import { silentLogger } from '../../../src/core/logger.js';
import { createStore, openDatabase } from '../../../src/db/index.js';
import { LOCAL_TEST_AGENT, testConfig } from '../test-config.js';

const config = testConfig(process.env.KS_TEST_DATA_DIR!, process.env.KS_TEST_BASE_URL!);
const handle = await openDatabase({ kind: 'postgres', url: process.env.KS_TEST_DB_URL! });
const store = createStore(handle.db);
const { engine } = createLocalAgent({ config, store, logger: silentLogger, ...LOCAL_TEST_AGENT, turnRetries: { retries: 0 } });
const runs = await engine.resumeLiveRuns();
process.stdout.write(`resumed ${runs.join(',')}\n`);
// Stay alive until killed; a test that lets the run end kills us too.
setInterval(() => {}, 1000);
