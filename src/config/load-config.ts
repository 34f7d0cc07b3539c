import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { dataDirProblem } from './data-dir.js';
import type { Env } from './process-env.js';
import { AgentEnvSchema, buildAgentConfig, type AgentConfig } from './modules/agent.js';
import { AnthropicEnvSchema, type AnthropicConfig } from './modules/anthropic.js';
import { CoreEnvSchema, type CoreConfig } from './modules/core.js';
import { DbEnvSchema, type DbConfig } from './modules/db.js';
import { DigestEnvSchema, type DigestConfig } from './modules/digest.js';
import { HarnessEnvSchema, type HarnessConfig } from './modules/harness.js';
import { buildPublishConfig, PublishEnvSchema, type PublishConfig } from './modules/publish.js';
import { QueueEnvSchema, type QueueConfig } from './modules/queue.js';
import { RedisEnvSchema, type RedisConfig } from './modules/redis.js';
import { SlackEnvSchema, type SlackConfig } from './modules/slack.js';

/** The whole configuration, one section per module. Passed in; never read from globals. */
export interface Config {
  core: CoreConfig;
  db: DbConfig;
  redis: RedisConfig;
  queue: QueueConfig;
  anthropic: AnthropicConfig;
  slack: SlackConfig;
  harness: HarnessConfig;
  digest: DigestConfig;
  agent: AgentConfig;
  publish: PublishConfig;
}

export { readProcessEnv, type Env } from './process-env.js';

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** The trusted checkout: kernels/, harness/ and questions/ are read from here, never from a workspace. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function check<S extends z.ZodType>(schema: S, env: Env, problems: string[]): z.output<S> | undefined {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) {
    const name = String(issue.path[0] ?? '(environment)');
    const value = env[name];
    const shown = value === undefined ? '' : ` (got ${JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value)})`;
    problems.push(`${name}: ${issue.message}${shown}`);
  }
  return undefined;
}

/**
 * Reads and validates the environment once. Every problem is reported at the same time, each naming
 * the variable and what a valid value looks like. The only reader of `process.env` in the product
 * is the caller of this function, which passes it in.
 */
export function loadConfig(env: Env, options: { cwd?: string } = {}): Config {
  const problems: string[] = [];
  const core = check(CoreEnvSchema, env, problems);
  const db = check(DbEnvSchema, env, problems);
  const redis = check(RedisEnvSchema, env, problems);
  const anthropic = check(AnthropicEnvSchema, env, problems);
  const slack = check(SlackEnvSchema, env, problems);
  const harness = check(HarnessEnvSchema, env, problems);
  const digest = check(DigestEnvSchema, env, problems);
  const agent = check(AgentEnvSchema, env, problems);
  const queue = check(QueueEnvSchema, env, problems);
  const publish = check(PublishEnvSchema, env, problems);
  const cwd = options.cwd ?? process.cwd();
  const dataDir = path.resolve(cwd, core?.KERNELSEEK_DATA_DIR ?? '.kernelseek');
  const dataDirIssue = dataDirProblem(dataDir);
  if (dataDirIssue) problems.push(`KERNELSEEK_DATA_DIR: ${core?.KERNELSEEK_DATA_DIR === undefined ? `unset, so ./.kernelseek; ${dataDirIssue}` : dataDirIssue}`);
  if (!core || !db || !redis || !anthropic || !slack || !harness || !digest || !agent || !queue || !publish || problems.length > 0) {
    throw new ConfigError(problems);
  }
  return {
    core: {
      dataDir,
      logLevel: core.LOG_LEVEL,
      repoRoot: REPO_ROOT,
      tasksDir: core.KERNELSEEK_TASKS_DIR ? path.resolve(cwd, core.KERNELSEEK_TASKS_DIR) : path.join(REPO_ROOT, 'kernels'),
    },
    db: db.DATABASE_URL ? { kind: 'postgres', url: db.DATABASE_URL } : { kind: 'pglite', dataDir: path.join(dataDir, 'pgdata') },
    redis: { url: redis.REDIS_URL ?? DEFAULT_REDIS_URL },
    queue: {
      prefix: queue.KERNELSEEK_QUEUE_PREFIX,
      lockSeconds: queue.KERNELSEEK_WORKER_LOCK,
      stalledCheckSeconds: queue.KERNELSEEK_WORKER_STALLED_CHECK,
      graceSeconds: queue.KERNELSEEK_WORKER_GRACE,
      ...(queue.KERNELSEEK_RESULT_KEY !== undefined ? { resultKey: queue.KERNELSEEK_RESULT_KEY } : {}),
    },
    anthropic: { apiKey: anthropic.ANTHROPIC_API_KEY, baseUrl: anthropic.ANTHROPIC_BASE_URL, model: anthropic.KERNELSEEK_MODEL },
    slack: {
      botToken: slack.SLACK_BOT_TOKEN,
      signingSecret: slack.SLACK_SIGNING_SECRET,
      appToken: slack.SLACK_APP_TOKEN,
      apiUrl: slack.SLACK_API_URL,
      port: slack.PORT,
      allowedUsers: slack.KERNELSEEK_ALLOWED_USERS,
      allowedChannels: slack.KERNELSEEK_ALLOWED_CHANNELS,
      admins: slack.KERNELSEEK_ADMINS,
      publicUrl: slack.KERNELSEEK_PUBLIC_URL?.replace(/\/+$/, ''),
    },
    harness: { python: harness.KERNELSEEK_PYTHON, nvcc: harness.KERNELSEEK_NVCC ?? 'nvcc' },
    digest: { cron: digest.DIGEST_CRON, timezone: digest.DIGEST_TZ, channel: digest.DIGEST_CHANNEL, window: digest.DIGEST_WINDOW },
    agent: buildAgentConfig(agent),
    publish: buildPublishConfig(publish),
  };
}

/** One problem of a configuration: the variable at fault and the whole line loadConfig words. */
export interface ConfigProblem {
  variable: string;
  message: string;
}

/**
 * Every problem of the environment at once, and a configuration to go on checking with: the one
 * the environment gives with the faulty variables left unset (their defaults), or none when even
 * that is invalid. For `kernelseek doctor` and the checks `serve` and `gpu-worker` make at start,
 * which report a bad REDIS_URL and an unreachable database in the same list.
 */
export function inspectConfig(env: Env, options: { cwd?: string } = {}): { config: Config | undefined; problems: ConfigProblem[] } {
  const problemsOf = (error: unknown): ConfigProblem[] => {
    if (!(error instanceof ConfigError)) throw error;
    return error.problems.map((message) => ({ variable: message.slice(0, Math.max(0, message.indexOf(':'))) || '(environment)', message }));
  };
  try {
    return { config: loadConfig(env, options), problems: [] };
  } catch (error) {
    const problems = problemsOf(error);
    const cleared: Env = { ...env };
    for (const p of problems) delete cleared[p.variable];
    try {
      return { config: loadConfig(cleared, options), problems };
    } catch {
      return { config: undefined, problems };
    }
  }
}
