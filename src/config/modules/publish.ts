import { z } from 'zod';
import { optionalString, url } from '../fields.js';

/**
 * Taking a result out (`kernelseek pr`, Slack's *Open pull request*): the GitHub REST API and the
 * git that pushes to the team's repository.
 */

/**
 * What the git that clones and pushes the team's repository may see of this process's environment:
 * where the person's own git configuration and credentials are (credential helper, SSH agent,
 * `insteadOf` rewrites, proxies), nothing else. The service's other secrets never reach it.
 */
export const GIT_ENV_PASSTHROUGH = [
  'PATH',
  'HOME',
  'USER',
  'LANG',
  'XDG_CONFIG_HOME',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_NOSYSTEM',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'SSH_AUTH_SOCK',
  'GIT_SSL_CAINFO',
  'GIT_SSL_NO_VERIFY',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
] as const;

export const PublishEnvSchema = z.object({
  GITHUB_TOKEN: optionalString(),
  GITHUB_API_URL: url('https://api.github.com', ['http:', 'https:']),
  ...Object.fromEntries(GIT_ENV_PASSTHROUGH.map((name) => [name, z.string().optional()])),
});

export interface PublishConfig {
  /** Opens pull requests through the REST API, and authenticates pushes over HTTPS to GitHub. */
  githubToken: string | undefined;
  /** REST API base (GitHub Enterprise: `https://host/api/v3`; tests: a local server). */
  githubApiUrl: string;
  /** The environment git runs with (GIT_ENV_PASSTHROUGH, as set). */
  gitEnv: Record<string, string>;
}

export const DEFAULT_GITHUB_API_URL = 'https://api.github.com';

export function buildPublishConfig(env: z.output<typeof PublishEnvSchema>): PublishConfig {
  const gitEnv: Record<string, string> = {};
  for (const name of GIT_ENV_PASSTHROUGH) {
    const value = (env as Record<string, string | undefined>)[name];
    if (value !== undefined) gitEnv[name] = value;
  }
  return { githubToken: env.GITHUB_TOKEN, githubApiUrl: (env.GITHUB_API_URL ?? DEFAULT_GITHUB_API_URL).replace(/\/+$/, ''), gitEnv };
}
