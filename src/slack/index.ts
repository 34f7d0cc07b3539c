/**
 * The Slack app (DESIGN §8): Bolt listeners by surface, Block Kit views, the run reporter that keeps
 * one status card per run and a quiet thread, and the one rate-aware poster every part of the
 * process sends through (the digest too).
 *
 *   const poster = createSlackPoster({ client: createSlackWebClient({ token, apiUrl }), logger });
 *   const reporter = createSlackReporter({ poster, store, logger });   // give it to the agent engine
 *   const app = await startSlackApp({ slack, store, control: engine, poster, logger, loadTasks }, { health });
 */
export { startSlackApp, EVENTS_PATH, type RunningSlackApp, type SlackAppOptions } from './app.js';
export { createSlackWebClient } from './client.js';
export { createSlackDirectory, type SlackDirectory } from './directory.js';
export { createPathScrubber, type PathRoot } from './poster/server-paths.js';
export {
  createSlackPoster,
  SLACK_PACING,
  type SlackPoster,
  type PosterOptions,
  type PosterPacing,
  type PosterStats,
  type PostResult,
  type MessagePayload,
  type UpdatePayload,
  type EphemeralPayload,
  type FilePayload,
  type ReactionPayload,
} from './poster/poster.js';
export { SLACK_TEXT_LIMITS, capText } from './poster/limits.js';
export { createSlackReporter, type SlackReporterDeps } from './reporter/slack-reporter.js';
export { STATUS_REFRESH_MS, SLACK_STATUS_LIFETIME_MS, type StatusClock } from './reporter/live-status.js';
export { goalsOf } from './listeners/commands/chart.js';
export { createBankPort } from './bank-port.js';
export { createResultsPort, type ResultsPort, type ResultOffer } from './results-port.js';
export { createTaskCatalogCache } from './task-cache.js';
export { checkHealth, createHealthRoute, startHealthServer, HEALTH_PATH, type HealthCheck, type HealthReport } from './health.js';
export type { SlackDeps, BankPort, DigestPort } from './deps.js';
export { createDigestPoster, createDigestPort } from './digest-port.js';
export type { KnownBlock } from './views/block-kit.js';
