import { resultKeyFile, resultKeyFromSecret } from '../queue/result-key.js';
import { ConfigError } from '../core/errors.js';
import type { CheckContext, CheckLine } from './types.js';

const blank = (v: string | undefined) => v === undefined || v.trim() === '';

/**
 * Every invalid variable (as the config loader words it) and every variable the process's parts
 * need that is not set, at once.
 */
export async function checkSettings(ctx: CheckContext): Promise<CheckLine[]> {
  const lines: CheckLine[] = ctx.problems.map((p) => ({
    status: 'fail',
    name: p.variable,
    detail: p.message.slice(p.variable.length + 2) || p.message,
    fix: `give ${p.variable} a value of the form above, or unset it for its default (README.md, Configuration)`,
  }));
  const { env, parts } = ctx;
  const has = (p: string) => parts.has(p as never);
  const invalid = new Set(ctx.problems.map((p) => p.variable));
  const need = (name: string, why: string, fix: string) => {
    if (blank(env[name]) && !invalid.has(name)) lines.push({ status: 'fail', name, detail: `not set: ${why}`, fix });
  };
  if (has('slack')) {
    need('SLACK_BOT_TOKEN', 'the Slack app needs its bot token', 'install the app from slack/manifest.yaml and copy its Bot User OAuth Token (xoxb-...) from OAuth & Permissions (docs/deploy.md, "The Slack app")');
    if (blank(env.SLACK_SIGNING_SECRET) && blank(env.SLACK_APP_TOKEN) && !invalid.has('SLACK_APP_TOKEN')) {
      lines.push({
        status: 'fail',
        name: 'SLACK_SIGNING_SECRET',
        detail: 'not set, and neither is SLACK_APP_TOKEN: Slack requests cannot be verified (HTTP mode) nor received over Socket Mode',
        fix: "set SLACK_SIGNING_SECRET (Basic Information → App Credentials) for HTTP mode, or SLACK_APP_TOKEN (an app-level token with connections:write) for Socket Mode",
      });
    }
  }
  if (has('agent')) {
    need('ANTHROPIC_API_KEY', 'the agent calls the model with it', 'set ANTHROPIC_API_KEY (console.anthropic.com → API keys), or the key of the Messages-API server at ANTHROPIC_BASE_URL');
  }
  if (has('scheduler') && !blank(env.DIGEST_CHANNEL) && blank(env.SLACK_BOT_TOKEN) && !has('slack')) {
    lines.push({ status: 'fail', name: 'DIGEST_CHANNEL', detail: 'is set, but SLACK_BOT_TOKEN is not: the digest cannot be posted', fix: 'set SLACK_BOT_TOKEN, or unset DIGEST_CHANNEL' });
  }
  if ((has('agent') || has('slack') || has('scheduler')) && blank(env.DATABASE_URL) && !invalid.has('DATABASE_URL')) {
    lines.push({
      status: 'warn',
      name: 'DATABASE_URL',
      detail: `not set: the embedded database under ${ctx.config?.core.dataDir ?? 'KERNELSEEK_DATA_DIR'} is used, which one process on one host can open`,
      fix: 'for a team, set DATABASE_URL to a PostgreSQL database (postgres://user:password@host:5432/kernelseek)',
    });
  }
  if (has('worker') && blank(env.REDIS_URL) && !invalid.has('REDIS_URL')) {
    lines.push({ status: 'warn', name: 'REDIS_URL', detail: 'not set: redis://127.0.0.1:6379, the Redis of this host', fix: "on a GPU host of its own, set REDIS_URL to the server's Redis" });
  }
  lines.push(...resultKeyLines(ctx));
  if (ctx.config?.agent.sandbox.mode === 'off' && (has('agent') || has('worker'))) {
    lines.push({ status: 'warn', name: 'KERNELSEEK_SANDBOX', detail: "off: the agent's commands run unconfined, with this service's user, files and network", fix: 'unset it (on) wherever the service holds anything you care about' });
  }
  return lines;
}

function resultKeyLines(ctx: CheckContext): CheckLine[] {
  const { env, config } = ctx;
  if (!blank(env.KERNELSEEK_RESULT_KEY)) {
    try {
      const key = resultKeyFromSecret(env.KERNELSEEK_RESULT_KEY!, 'KERNELSEEK_RESULT_KEY');
      return [{ status: 'ok', name: 'KERNELSEEK_RESULT_KEY', detail: `set (fingerprint ${key.id}: compare it with the other processes' logs and doctor reports)` }];
    } catch (error) {
      const text = error instanceof ConfigError ? error.problems.join('; ') : String(error);
      return [{ status: 'fail', name: 'KERNELSEEK_RESULT_KEY', detail: text.replace(/^KERNELSEEK_RESULT_KEY: /, ''), fix: 'generate one with openssl rand -hex 32 and give it to serve and every gpu-worker' }];
    }
  }
  if (!config) return [];
  return [
    {
      status: 'warn',
      name: 'KERNELSEEK_RESULT_KEY',
      detail: `not set: the key file ${resultKeyFile(config)} is used, which only processes on this host that share its data dir have`,
      fix: 'when serve and the gpu-workers run on different hosts (or in different containers), give each the same KERNELSEEK_RESULT_KEY (openssl rand -hex 32)',
    },
  ];
}
