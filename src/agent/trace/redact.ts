import type { Config } from '../../config/index.js';
import { urlCredentials } from '../../core/redact.js';

export { REDACTED, redactString, redactValue } from '../../core/redact.js';

/** The configured credentials: their exact values are redacted wherever they appear. */
export function configuredSecrets(config: Config): string[] {
  const values = [config.anthropic.apiKey, config.slack.botToken, config.slack.signingSecret, config.slack.appToken, config.publish.githubToken, ...config.agent.extraSecrets];
  // Every connection URL's password: the database, Redis (BullMQ), and the API base URLs.
  if (config.db.kind === 'postgres') values.push(...urlCredentials(config.db.url));
  values.push(...urlCredentials(config.redis.url), ...urlCredentials(config.anthropic.baseUrl), ...urlCredentials(config.slack.apiUrl), ...urlCredentials(config.publish.githubApiUrl));
  return [...new Set(values.filter((v): v is string => typeof v === 'string' && v.length >= 4))];
}
