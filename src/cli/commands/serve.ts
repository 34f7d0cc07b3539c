import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { createAgentEngine, createBankQuestionSource, createQueueTurnScheduler, startAgentTurnWorker, startRunReconciler, createRedisWorkerAvailability } from '../../agent/index.js';
import { REPO_ROOT, type Config } from '../../config/index.js';
import { startDigestScheduler } from '../../digest/index.js';
import { UserInputError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { createStore, openDatabase, type Store } from '../../db/index.js';
import { loadTaskCatalog } from '../../harness/tasks.js';
import { checkBeforeStart, type CheckLine, type Part } from '../../doctor/index.js';
import { checkRedis, computeHarnessVersion, createBullmqDispatcher, createQueueClient, loadResultKey, redisOptionsFromUrl } from '../../queue/index.js';
import {
  checkHealth,
  createBankPort,
  createResultsPort,
  createDigestPort,
  createDigestPoster,
  startHealthServer,
  createSlackPoster,
  createSlackReporter,
  createSlackWebClient,
  createSlackDirectory,
  createPathScrubber,
  goalsOf,
  createTaskCatalogCache,
  EVENTS_PATH,
  HEALTH_PATH,
  startSlackApp,
  type SlackPoster,
} from '../../slack/index.js';
import { loggerOf, writeLine, type CliContext } from '../context.js';

const ROLES = ['all', 'slack', 'agent', 'scheduler'] as const;
type Role = (typeof ROLES)[number];

interface ServeOptions {
  role: string;
  port?: string;
  agentConcurrency: string;
}

function parseRole(value: string): Role {
  if ((ROLES as readonly string[]).includes(value)) return value as Role;
  throw new UserInputError(`Unknown role '${value}'. Use one of: ${ROLES.join(', ')} (all: the Slack app, agent workers and the digest scheduler in one process).`);
}

function parsePositive(value: string, what: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UserInputError(`${what} must be a whole number, got '${value}'.`);
  return n;
}

export function registerServe(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('Run the Slack app, the agent workers and the digest scheduler (split them across machines with --role)')
    .option('--role <role>', `what this process runs: ${ROLES.join(' | ')}`, 'all')
    .option('--port <port>', 'HTTP port for /slack/events and /healthz (default: PORT, 3000)')
    .option('--agent-concurrency <n>', 'agent turns run at once by this process (agent role)', '4')
    .action(async (opts: ServeOptions) => {
      const role = parseRole(opts.role);
      const portOption = opts.port !== undefined ? parsePositive(opts.port, '--port') : undefined;
      const concurrency = Math.max(1, parsePositive(opts.agentConcurrency, '--agent-concurrency'));
      // The same checks as `kernelseek doctor`, all at once: a missing token, an unreachable store
      // and a broken sandbox are reported together, not one per restart.
      const warnings: CheckLine[] = [];
      const parts: Part[] = role === 'all' ? ['slack', 'agent', 'scheduler'] : [role];
      const config = await checkBeforeStart(`kernelseek serve (role ${role})`, role === 'agent' ? 'agent' : 'serve', { env: ctx.env, cwd: ctx.cwd, parts }, (l) => warnings.push(l));
      const logger = loggerOf(config, 'serve');
      for (const w of warnings) logger.warn({ check: w.name, fix: w.fix }, w.detail);
      await serve(ctx, config, { role, port: portOption ?? config.slack.port, concurrency });
    });
}

async function serve(ctx: CliContext, config: Config, options: { role: Role; port: number; concurrency: number }): Promise<void> {
  const logger = loggerOf(config, 'serve');
  const handle = await openDatabase(config.db);
  const stops: { name: string; stop: () => Promise<unknown> }[] = [{ name: 'database', stop: () => handle.close() }];
  const shutdown = async () => {
    for (const { name, stop } of stops.reverse()) {
      await stop().catch((error: unknown) => logger.warn({ err: error, part: name }, 'error while shutting down'));
    }
  };
  try {
    const { applied } = await handle.migrate();
    if (applied > 0) logger.info({ applied }, 'applied database migrations');
    const store = createStore(handle.db);
    const poster = config.slack.botToken ? createPoster(config, logger) : undefined;
    if (poster) stops.push({ name: 'slack poster', stop: () => poster.close(5000) });
    else if (options.role !== 'slack') logger.warn('SLACK_BOT_TOKEN is not set: runs will not report to Slack from this process');
    const started = await startRoles(config, logger, store, poster, options, stops);
    writeLine(ctx.stdout, started);
    await new Promise<void>((resolve) => (ctx.signal.aborted ? resolve() : ctx.signal.addEventListener('abort', () => resolve(), { once: true })));
    writeLine(ctx.stdout, 'Shutting down: finishing in-flight work…');
  } finally {
    await shutdown();
  }
}

/** Server paths never reach Slack: the data directory, the tasks and this checkout are named, any other absolute path cut. */
function serverPathScrubber(config: Config): (text: string) => string {
  return createPathScrubber([
    { path: config.core.dataDir, label: '(data dir)' },
    { path: config.core.tasksDir, label: '(tasks)' },
    { path: REPO_ROOT, label: '(kernelseek)' },
  ]);
}

function createPoster(config: Config, logger: Logger): SlackPoster {
  return createSlackPoster({
    client: createSlackWebClient({ token: config.slack.botToken!, apiUrl: config.slack.apiUrl }),
    logger: logger.child({ component: 'slack-poster' }),
    scrub: serverPathScrubber(config),
  });
}

async function startRoles(
  config: Config,
  logger: Logger,
  store: Store,
  poster: SlackPoster | undefined,
  options: { role: Role; port: number; concurrency: number },
  stops: { name: string; stop: () => Promise<unknown> }[],
): Promise<string> {
  const has = (r: Role) => options.role === 'all' || options.role === r;
  const loadTasks = createTaskCatalogCache(() => loadTaskCatalog(config.core.tasksDir));
  const connection = redisOptionsFromUrl(config.redis.url);
  const prefix = config.queue.prefix;
  const queues = createQueueClient({ connection, prefix });
  stops.push({ name: 'queues', stop: () => queues.close() });
  // Jobs go to the workers of this checkout's harness version; a run says when only others are attached.
  const harness = await computeHarnessVersion(config.core.repoRoot);
  logger.info({ harness: harness.version }, 'evaluations go to the gpu-workers of this harness version');
  const workers = createRedisWorkerAvailability(connection, prefix, harness);
  stops.push({ name: 'worker availability', stop: () => workers.close() });
  const resultKey = await loadResultKey(config);
  logger.info({ resultKey: resultKey.id, from: resultKey.source }, 'results are accepted only when sealed with this result key');
  const dispatcher = createBullmqDispatcher({ connection, prefix, resultKey, harness, repoRoot: config.core.repoRoot, tasksDir: config.core.tasksDir, logger: logger.child({ component: 'dispatcher' }) });
  stops.push({ name: 'dispatcher', stop: () => dispatcher.close() });
  const engine = createAgentEngine({
    config,
    store,
    dispatcher,
    scheduler: createQueueTurnScheduler(queues),
    workers,
    questions: createBankQuestionSource({ store }),
    ...(poster ? { reporter: createSlackReporter({ poster, store, goals: () => goalsOf({ loadTasks }), logger: logger.child({ component: 'slack-reporter' }), results: createResultsPort({ config, store }) }) } : {}),
    logger: logger.child({ component: 'agent' }),
  });
  stops.push({ name: 'agent engine', stop: () => engine.close() });
  const health = () =>
    checkHealth([
      { name: 'database', check: async () => void (await store.db.execute('select 1')) },
      { name: 'redis', check: () => checkRedis(config.redis.url, 1500) },
    ]);
  const lines: string[] = [`KernelSeek serve (role ${options.role})`];

  if (has('agent')) {
    const worker = startAgentTurnWorker(engine, {
      connection,
      prefix,
      concurrency: options.concurrency,
      lockSeconds: config.queue.lockSeconds,
      stalledCheckSeconds: config.queue.stalledCheckSeconds,
      name: 'kernelseek-agent',
      logger: logger.child({ component: 'agent-worker' }),
    });
    stops.push({ name: 'agent worker', stop: () => worker.close() });
    const reconciler = await startRunReconciler(engine, queues, { connection, prefix, everyMs: config.agent.runs.reconcileSeconds * 1000, logger: logger.child({ component: 'reconciler' }) });
    stops.push({ name: 'run reconciler', stop: () => reconciler.close() });
    const resumed = await engine.resumeLiveRuns();
    lines.push(`  agent: ${options.concurrency} turn(s) at once; ${resumed.length} live run(s) resumed`);
  }
  if (has('scheduler')) {
    if (config.digest.channel && !poster) throw new UserInputError('DIGEST_CHANNEL is set but SLACK_BOT_TOKEN is not: the digest cannot be posted.');
    if (poster) {
      const digest = await startDigestScheduler({
        connection,
        prefix,
        config: config.digest,
        deps: { store, poster: createDigestPoster(poster), timeZone: config.digest.timezone, window: config.digest.window, goals: () => goalsOf({ loadTasks }), logger: logger.child({ component: 'digest' }) },
        logger: logger.child({ component: 'digest' }),
      });
      stops.push({ name: 'digest scheduler', stop: () => digest.close() });
      lines.push(digest.scheduled ? `  scheduler: daily digest to ${config.digest.channel} at '${config.digest.cron}' (${config.digest.timezone})` : '  scheduler: no DIGEST_CHANNEL, no daily digest');
    } else {
      lines.push('  scheduler: no DIGEST_CHANNEL, no daily digest');
    }
  }
  if (has('slack')) {
    if (!poster) throw new UserInputError('The slack role needs SLACK_BOT_TOKEN (and SLACK_SIGNING_SECRET, or SLACK_APP_TOKEN for Socket Mode).');
    const app = await startSlackApp(
      {
        slack: config.slack,
        store,
        control: engine,
        poster,
        logger: logger.child({ component: 'slack' }),
        loadTasks,
        bank: createBankPort(store),
        digest: createDigestPort({ store, poster, timeZone: config.digest.timezone, window: config.digest.window, goals: () => goalsOf({ loadTasks }), logger: logger.child({ component: 'digest' }) }),
        directory: createSlackDirectory({ client: createSlackWebClient({ token: config.slack.botToken!, apiUrl: config.slack.apiUrl }), logger: logger.child({ component: 'slack-directory' }) }),
        scrub: serverPathScrubber(config),
        results: createResultsPort({ config, store }),
      },
      { health, port: options.port },
    );
    stops.push({ name: 'slack app', stop: () => app.stop() });
    lines.push(
      app.mode === 'socket'
        ? `  slack: Socket Mode; health on http://0.0.0.0:${app.port}${HEALTH_PATH}`
        : `  slack: HTTP on http://0.0.0.0:${app.port}${EVENTS_PATH}; health on http://0.0.0.0:${app.port}${HEALTH_PATH}`,
    );
  } else {
    const server = await startHealthServer(options.port, health);
    stops.push({ name: 'health server', stop: () => new Promise((r) => server.close(() => r(undefined))) });
    lines.push(`  health on http://0.0.0.0:${(server.address() as AddressInfo).port}${HEALTH_PATH}`);
  }
  return lines.join('\n');
}
