export { loadConfig, readProcessEnv, REPO_ROOT, type Config, type Env } from './load-config.js';
export { parseDuration } from './fields.js';
export { DEFAULT_MODEL } from './modules/anthropic.js';
export type { DbConfig } from './modules/db.js';
export type { SlackConfig } from './modules/slack.js';
export type { HarnessConfig } from './modules/harness.js';
export type { DigestConfig } from './modules/digest.js';
export type { AnthropicConfig } from './modules/anthropic.js';
export type { AgentConfig } from './modules/agent.js';
