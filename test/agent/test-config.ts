import path from 'node:path';
import { loadConfig, REPO_ROOT, type Config, type Env } from '../../src/config/index.js';

// No vitest import here: worker processes spawned by tests load this file too.

/** The configuration of a test: its own data dir, the fake server, the real tasks and harness. */
export function testConfig(dataDir: string, baseUrl: string, extra: Env = {}): Config {
  return loadConfig(
    {
      KERNELSEEK_DATA_DIR: dataDir,
      KERNELSEEK_TASKS_DIR: path.join(REPO_ROOT, 'kernels'),
      KERNELSEEK_PYTHON: '/usr/bin/python3',
      ANTHROPIC_API_KEY: 'sk-ant-test-0000000000',
      ANTHROPIC_BASE_URL: baseUrl,
      PATH: process.env.PATH,
      LOG_LEVEL: 'silent',
      KERNELSEEK_MODEL: 'claude-sonnet-4-6',
      ...extra,
    },
    { cwd: dataDir },
  );
}


/** How tests run an agent in their process (createLocalAgent): quick retries, harness on PATH. */
export const LOCAL_TEST_AGENT = {
  dispatcherEnv: { PATH: process.env.PATH },
  turnRetries: { retries: 1, retryDelayMs: 200 },
  retryPolicy: { baseDelayMs: 20, maxDelayMs: 200 },
};
