import path from 'node:path';
import { createLocalAgent, type AgentEngine, type LocalAgent } from '../../../src/agent/index.js';
import { loadConfig, REPO_ROOT, type Config, type Env } from '../../../src/config/index.js';
import { silentLogger } from '../../../src/core/logger.js';
import type { Store } from '../../../src/db/index.js';
import { loadTaskCatalog } from '../../../src/harness/tasks.js';
import {
  createBankPort,
  createDigestPort,
  createPathScrubber,
  createResultsPort,
  createSlackDirectory,
  createSlackPoster,
  createTaskCatalogCache,
  createSlackReporter,
  createSlackWebClient,
  goalsOf,
  startSlackApp,
  type PosterPacing,
  type RunningSlackApp,
  type SlackPoster,
  type StatusClock,
} from '../../../src/slack/index.js';
import { LOCAL_TEST_AGENT } from '../../agent/test-config.js';
import { startFakeAnthropic, type FakeAnthropic, type FakeAnthropicOptions } from '../anthropic/server.js';
import { startFakeSlack, type FakeSlack, type FakeSlackOptions } from './fake-slack.js';
import { createSlackSender, TEST_SIGNING_SECRET, type SlackSender } from './signed-requests.js';

/**
 * The Slack app end to end in one process: Bolt's HTTP receiver on a free port with signature
 * checks, the fake Slack Web API behind SLACK_API_URL, the real agent engine on the fake Anthropic
 * server, the in-process dispatcher running the real harness, the question bank, and the store.
 */
export interface SlackStack {
  fake: FakeSlack;
  anthropic: FakeAnthropic;
  sender: SlackSender;
  config: Config;
  engine: AgentEngine;
  scheduler: LocalAgent['scheduler'];
  poster: SlackPoster;
  /** The Slack reporter the engine reports to (a test may report a run's end itself). */
  reporter: ReturnType<typeof createSlackReporter>;
  app: RunningSlackApp;
  close(): Promise<void>;
}

export interface SlackStackOptions {
  store: Store;
  dataDir: string;
  anthropic?: FakeAnthropicOptions;
  slack?: FakeSlackOptions;
  env?: Env;
  pacing?: Partial<PosterPacing>;
  /** The thread status line's refresh (default: the product's 90 s) and its clock. */
  statusRefreshMs?: number;
  statusClock?: StatusClock;
}

export async function startSlackStack(options: SlackStackOptions): Promise<SlackStack> {
  const fake = await startFakeSlack(options.slack);
  const anthropic = await startFakeAnthropic(options.anthropic ?? {});
  const config = loadConfig(
    {
      KERNELSEEK_DATA_DIR: options.dataDir,
      KERNELSEEK_TASKS_DIR: path.join(REPO_ROOT, 'kernels'),
      KERNELSEEK_PYTHON: '/usr/bin/python3',
      ANTHROPIC_API_KEY: 'sk-ant-test-0000000000',
      ANTHROPIC_BASE_URL: anthropic.url,
      KERNELSEEK_MODEL: 'claude-sonnet-4-6',
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET: TEST_SIGNING_SECRET,
      SLACK_API_URL: fake.apiUrl,
      LOG_LEVEL: 'silent',
      PATH: process.env.PATH,
      ...options.env,
    },
    { cwd: options.dataDir },
  );
  // As serve does: the data directory, the tasks and the checkout never reach Slack.
  const scrub = createPathScrubber([
    { path: config.core.dataDir, label: '(data dir)' },
    { path: config.core.tasksDir, label: '(tasks)' },
    { path: REPO_ROOT, label: '(kernelseek)' },
  ]);
  const client = createSlackWebClient({ token: config.slack.botToken!, apiUrl: config.slack.apiUrl });
  const poster = createSlackPoster({
    client,
    logger: silentLogger,
    pacing: { messageIntervalMs: 50, updateIntervalMs: 50, ephemeralIntervalMs: 20, reactionIntervalMs: 20, statusIntervalMs: 20, unfurlIntervalMs: 20, viewIntervalMs: 20, ...options.pacing },
    backoffMs: 50,
    scrub,
  });
  const loadTasks = createTaskCatalogCache(() => loadTaskCatalog(config.core.tasksDir));
  const results = createResultsPort({ config, store: options.store });
  const reporter = createSlackReporter({
    results,
    poster,
    store: options.store,
    logger: silentLogger,
    goals: () => goalsOf({ loadTasks }),
    ...(options.statusRefreshMs ? { statusRefreshMs: options.statusRefreshMs } : {}),
    ...(options.statusClock ? { statusClock: options.statusClock } : {}),
  });
  const agent = createLocalAgent({ config, store: options.store, logger: silentLogger, ...LOCAL_TEST_AGENT, reporter });
  const { engine, scheduler } = agent;
  const app = await startSlackApp(
    {
      slack: config.slack,
      store: options.store,
      control: engine,
      poster,
      logger: silentLogger,
      loadTasks,
      bank: createBankPort(options.store),
      digest: createDigestPort({ store: options.store, poster, timeZone: 'UTC', goals: () => goalsOf({ loadTasks }), logger: silentLogger }),
      directory: createSlackDirectory({ client, logger: silentLogger }),
      scrub,
      results,
    },
    { health: async () => ({ ok: true, checks: {} }), port: 0 },
  );
  const sender = createSlackSender(`http://127.0.0.1:${app.port}/slack/events`);
  return {
    fake,
    anthropic,
    sender,
    config,
    engine,
    scheduler,
    poster,
    reporter,
    app,
    async close() {
      await app.stop();
      await agent.close();
      await poster.close(1000);
      await anthropic.close();
      await fake.close();
    },
  };
}
