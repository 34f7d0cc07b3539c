import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { parse as parseYaml } from 'yaml';
import { describeError } from '../core/errors.js';
import { MIGRATIONS_DIR, openDatabase, redact } from '../db/index.js';
import { redisOptionsFromUrl } from '../queue/connection.js';
import type { CheckContext, CheckLine } from './types.js';

/** Compares dotted versions: negative when a < b. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const pb = b.split('.').map((n) => Number.parseInt(n, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

async function migrationCount(): Promise<number> {
  const journal = JSON.parse(await readFile(path.join(MIGRATIONS_DIR, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] };
  return journal.entries.length;
}

/** The store: reachable, its version, and how many migrations `serve` will apply at start. */
export async function checkStore(ctx: CheckContext): Promise<CheckLine[]> {
  const config = ctx.config;
  if (!config) return [];
  if (config.db.kind === 'pglite' && ctx.atStart) {
    // serve opens it itself right after these checks; a second open here would only cost time.
    return [{ status: 'ok', name: 'store', detail: `embedded database (PGlite) at ${config.db.dataDir}, opened at start` }];
  }
  const where = config.db.kind === 'postgres' ? `PostgreSQL at ${redact(config.db.url)}` : `embedded database (PGlite) at ${config.db.dataDir}`;
  let handle;
  try {
    handle = await openDatabase(config.db);
  } catch (error) {
    return [{ status: 'fail', name: 'store', detail: describeError(error), fix: config.db.kind === 'postgres' ? 'start PostgreSQL or correct DATABASE_URL' : 'stop the KernelSeek process that holds it, or set DATABASE_URL' }];
  }
  try {
    const rows = (await handle.db.execute(sql`select current_setting('server_version') as v`)) as unknown as { rows?: { v: string }[] } | { v: string }[];
    const version = (Array.isArray(rows) ? rows[0]?.v : rows.rows?.[0]?.v) ?? 'unknown';
    let applied = 0;
    try {
      const r = (await handle.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`)) as unknown as { rows?: { n: number }[] } | { n: number }[];
      applied = (Array.isArray(r) ? r[0]?.n : r.rows?.[0]?.n) ?? 0;
    } catch {
      applied = 0;
    }
    const pending = Math.max(0, (await migrationCount()) - applied);
    const lines: CheckLine[] = [{ status: 'ok', name: 'store', detail: `${where}: server ${version}; ${pending === 0 ? 'migrations up to date' : `${pending} migration(s) to apply (serve and kernelseek migrate apply them)`}` }];
    if (config.db.kind === 'postgres' && compareVersions(version, '13') < 0) {
      lines.push({ status: 'warn', name: 'store', detail: `PostgreSQL ${version} is older than the 13 KernelSeek is tested with`, fix: 'upgrade PostgreSQL (13 or later)' });
    }
    return lines;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Redis: reachable, its version (BullMQ needs 5, wants 6.2) and its eviction policy (BullMQ needs noeviction). */
export async function checkRedisServer(ctx: CheckContext): Promise<CheckLine[]> {
  if (!ctx.config) return [];
  const url = ctx.config.redis.url;
  const shown = url.replace(/\/\/[^@/]*@/, '//***@');
  const client = new Redis({ ...redisOptionsFromUrl(url), lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const info = await client.info();
    const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
    const version = field('redis_version') ?? 'unknown';
    const policy = field('maxmemory_policy');
    const lines: CheckLine[] = [];
    if (compareVersions(version, '5.0.0') < 0) {
      lines.push({ status: 'fail', name: 'Redis', detail: `${shown}: Redis ${version}; BullMQ needs 5.0 or later`, fix: 'upgrade Redis (7 recommended)' });
    } else {
      lines.push({ status: 'ok', name: 'Redis', detail: `${shown}: Redis ${version}${policy ? `, maxmemory-policy ${policy}` : ''}` });
      if (compareVersions(version, '6.2.0') < 0) lines.push({ status: 'warn', name: 'Redis', detail: `Redis ${version} is older than the 6.2 BullMQ recommends`, fix: 'upgrade Redis (7 recommended)' });
    }
    if (policy && policy !== 'noeviction') {
      lines.push({ status: 'warn', name: 'Redis', detail: `maxmemory-policy is ${policy}: Redis may evict queued jobs when memory runs short`, fix: 'set maxmemory-policy noeviction (redis.conf, or CONFIG SET maxmemory-policy noeviction)' });
    }
    return lines;
  } catch (error) {
    return [{ status: 'fail', name: 'Redis', detail: `cannot reach Redis at ${shown} (${(error as Error).message})`, fix: 'start Redis, or point REDIS_URL at a running one' }];
  } finally {
    client.disconnect();
  }
}

/** The bot scopes slack/manifest.yaml asks for. */
export async function manifestScopes(file: string): Promise<string[]> {
  const manifest = parseYaml(await readFile(file, 'utf8')) as { oauth_config?: { scopes?: { bot?: string[] } } };
  return manifest.oauth_config?.scopes?.bot ?? [];
}

/** The Slack token: valid (auth.test), with every scope the manifest asks (the x-oauth-scopes header). */
export async function checkSlack(ctx: CheckContext): Promise<CheckLine[]> {
  const slack = ctx.config?.slack;
  if (!slack?.botToken) return [];
  // Through Bolt's copy of the Web API client: the one the app itself uses.
  const { webApi } = await import('@slack/bolt');
  const { WebClient } = webApi;
  const options = { ...(slack.apiUrl ? { slackApiUrl: slack.apiUrl } : {}), retryConfig: { retries: 0 }, timeout: 10_000 };
  const client = new WebClient(slack.botToken, options);
  const lines: CheckLine[] = [];
  try {
    const auth = await client.auth.test();
    const granted = auth.response_metadata?.scopes;
    lines.push({ status: 'ok', name: 'Slack token', detail: `valid: bot ${auth.user ?? '?'} (${auth.user_id ?? '?'}) in ${auth.team ?? '?'}` });
    const wanted = await manifestScopes(ctx.manifestPath);
    if (!granted) {
      lines.push({ status: 'warn', name: 'Slack scopes', detail: "Slack did not report the token's scopes (no x-oauth-scopes header)", fix: `check under OAuth & Permissions that the bot has ${wanted.join(', ')}` });
    } else {
      const missing = wanted.filter((s) => !granted.includes(s));
      lines.push(
        missing.length === 0
          ? { status: 'ok', name: 'Slack scopes', detail: `every scope slack/manifest.yaml asks (${wanted.length})` }
          : {
              status: 'fail',
              name: 'Slack scopes',
              detail: `the token lacks ${missing.join(', ')}, which slack/manifest.yaml asks`,
              fix: 'add them under OAuth & Permissions (or update the app from slack/manifest.yaml) and reinstall the app to the workspace; the new token is SLACK_BOT_TOKEN',
            },
      );
    }
  } catch (error) {
    const code = (error as { data?: { error?: string } }).data?.error;
    lines.push({
      status: 'fail',
      name: 'Slack token',
      detail: code ? `Slack refused SLACK_BOT_TOKEN: ${code}` : `cannot reach Slack at ${slack.apiUrl ?? 'https://slack.com/api/'}: ${(error as Error).message}`,
      fix: code ? "copy the app's current Bot User OAuth Token (OAuth & Permissions) into SLACK_BOT_TOKEN; reinstall the app if it was revoked" : 'check this host can reach Slack (proxy, firewall, SLACK_API_URL)',
    });
  }
  if (slack.appToken) {
    try {
      await new WebClient(slack.appToken, options).apps.connections.open();
      lines.push({ status: 'ok', name: 'Slack app token', detail: 'valid: Socket Mode can connect (apps.connections.open)' });
    } catch (error) {
      const code = (error as { data?: { error?: string } }).data?.error ?? (error as Error).message;
      lines.push({ status: 'fail', name: 'Slack app token', detail: `Slack refused SLACK_APP_TOKEN: ${code}`, fix: 'create an app-level token with the connections:write scope (Basic Information → App-Level Tokens) and enable Socket Mode' });
    }
  }
  return lines;
}

/** The model key, with one free request (the model's description); only when asked (--check-model). */
export async function checkModel(ctx: CheckContext): Promise<CheckLine[]> {
  const anthropic = ctx.config?.anthropic;
  if (!anthropic?.apiKey) return [];
  if (!ctx.checkModel) {
    return [{ status: 'ok', name: 'model', detail: `${anthropic.model}: key not tried (kernelseek doctor --check-model asks the Models API once, at no cost)` }];
  }
  const { default: Anthropic } = await import('@anthropic-ai/sdk');
  const client = new Anthropic({ apiKey: anthropic.apiKey, ...(anthropic.baseUrl ? { baseURL: anthropic.baseUrl } : {}), maxRetries: 1, timeout: 15_000 });
  const where = anthropic.baseUrl ?? 'https://api.anthropic.com';
  try {
    const model = await client.models.retrieve(anthropic.model);
    return [{ status: 'ok', name: 'model', detail: `${anthropic.model} answers at ${where} (${model.display_name})` }];
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === 401 || status === 403) return [{ status: 'fail', name: 'model', detail: `${where} does not accept ANTHROPIC_API_KEY (HTTP ${status})`, fix: 'set ANTHROPIC_API_KEY to a valid key of this organisation' }];
    if (status === 404) return [{ status: 'fail', name: 'model', detail: `${where} has no model ${anthropic.model}`, fix: 'set KERNELSEEK_MODEL to a model id the key can use (e.g. claude-sonnet-4-6)' }];
    return [{ status: 'fail', name: 'model', detail: `cannot ask ${where}: ${(error as Error).message}`, fix: 'check this host can reach the API (proxy, firewall, ANTHROPIC_BASE_URL)' }];
  }
}
