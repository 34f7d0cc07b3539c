import { setTimeout as delay } from 'node:timers/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { attachSocketMode, type FakeSocketMode } from './fake-socket-mode.js';
import { parseMultipart, parseRequestBody } from './parse-body.js';

/**
 * A local HTTP server that speaks the parts of Slack's Web API KernelSeek uses, behind
 * `SLACK_API_URL`. The real @slack/web-api client talks to it, so serialisation, 429 handling and
 * the files upload v2 flow are the SDK's own. Every call is recorded with its arguments; a test can
 * make a method answer 429 with Retry-After, or fail with a Slack error, for the next N calls.
 *
 * It also enforces the limits Slack enforces (message length, block count, section text length),
 * so a test that passes here would not be rejected by Slack for size.
 */

export interface RecordedCall {
  method: string;
  args: Record<string, unknown>;
  /** Milliseconds since the server started. */
  at: number;
  /** `ok`, `rate_limited`, or the Slack error code it answered. */
  outcome: string;
  token: string | undefined;
}

export interface StoredMessage {
  channel: string;
  ts: string;
  threadTs: string | undefined;
  text: string;
  blocks: unknown[] | undefined;
  user: string;
  /** Every version of this message, oldest first (chat.update appends). */
  history: { text: string; blocks: unknown[] | undefined }[];
  reactions: string[];
}

export interface StoredFile {
  id: string;
  filename: string;
  title: string | undefined;
  channel: string | undefined;
  threadTs: string | undefined;
  initialComment: string | undefined;
  content: Buffer;
}

export interface RecordedResponse {
  /** The id in the response_url path. */
  id: string;
  body: Record<string, unknown>;
  at: number;
}

interface Rule {
  method: string;
  remaining: number;
  kind: 'rate_limited' | 'error';
  retryAfter?: number;
  error?: string;
  match?: (args: Record<string, unknown>) => boolean;
}

export interface FakeSlackOptions {
  /** Channels the bot is a member of; others answer `not_in_channel`. Default: every channel. */
  memberOf?: string[];
  /** Channels that exist; others answer `channel_not_found`. Default: every channel. */
  channels?: string[];
  botUserId?: string;
  /** Artificial latency per call, in ms. */
  latencyMs?: number;
  /**
   * The bot token's scopes, sent as Slack sends them in the `x-oauth-scopes` header of every Web
   * API answer (the client reads them into response_metadata.scopes). Unset: no header.
   */
  scopes?: string[];
  /** Whether the workspace takes Work Objects (`chat.unfurl` with `metadata`); default true. */
  workObjects?: boolean;
}

/** A `chat.unfurl` Slack accepted. */
export interface StoredUnfurl {
  channel: string;
  ts: string;
  kind: 'work_object' | 'blocks';
  /** `metadata.entities` or `unfurls`, as sent. */
  payload: unknown;
}

export interface FakeSlack {
  /** Base URL ending in `/api/`: pass it as SLACK_API_URL. */
  apiUrl: string;
  /** Base URL of the server (for response_url values). */
  baseUrl: string;
  botUserId: string;
  /** Slack's Socket Mode endpoint (apps.connections.open points the app at it). */
  socket: FakeSocketMode;
  calls: RecordedCall[];
  messages: StoredMessage[];
  files: StoredFile[];
  responses: RecordedResponse[];
  unfurls: StoredUnfurl[];
  /** The App Home view last published per user. */
  homes: Map<string, { type: string; blocks: unknown[] }>;
  /** The next `times` calls of `method` (that `match`, if given) answer 429 with Retry-After. */
  rateLimit(method: string, options: { times: number; retryAfter: number; match?: (args: Record<string, unknown>) => boolean }): void;
  /** The next `times` calls of `method` answer `{ ok: false, error }`. */
  fail(method: string, options: { error: string; times?: number; match?: (args: Record<string, unknown>) => boolean }): void;
  /** Calls of one method (successful or not), in order. */
  callsOf(method: string): RecordedCall[];
  /** Top-level messages and replies in one thread, in the order Slack stored them. */
  thread(channel: string, threadTs: string): StoredMessage[];
  message(channel: string, ts: string): StoredMessage | undefined;
  /** Records a message a person wrote (a thread reply sent to the app as an event), so reactions on it work as in Slack. */
  userPosted(message: { channel: string; ts: string; threadTs?: string; user: string; text: string }): void;
  /** A response_url for a slash command or action: what Bolt's `respond` posts to is recorded. */
  responseUrl(id: string): string;
  /** Resolves when a call satisfying `predicate` has been recorded (polls; rejects after `timeoutMs`). */
  waitFor(predicate: (fake: FakeSlack) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

/** Slack's documented limits that the fake enforces. */
export const SLACK_LIMITS = { textChars: 40_000, blocks: 50, sectionTextChars: 3000, headerTextChars: 150 } as const;

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The first block-size rule a payload breaks, as Slack would name it. */
function blocksProblem(blocks: unknown): string | undefined {
  if (blocks === undefined) return undefined;
  if (!Array.isArray(blocks)) return 'invalid_blocks_format';
  if (blocks.length > SLACK_LIMITS.blocks) return 'invalid_blocks';
  for (const b of blocks as { type?: string; text?: { text?: string }; fields?: { text?: string }[] }[]) {
    if (b.type === 'section' && (b.text?.text?.length ?? 0) > SLACK_LIMITS.sectionTextChars) return 'invalid_blocks';
    if (b.type === 'section' && (b.fields ?? []).some((f) => (f.text?.length ?? 0) > 2000)) return 'invalid_blocks';
    if (b.type === 'header' && (b.text?.text?.length ?? 0) > SLACK_LIMITS.headerTextChars) return 'invalid_blocks';
  }
  return undefined;
}

export async function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  const started = Date.now();
  const botUserId = options.botUserId ?? 'UKSBOT001';
  const calls: RecordedCall[] = [];
  const messages: StoredMessage[] = [];
  const files: StoredFile[] = [];
  const responses: RecordedResponse[] = [];
  const unfurls: StoredUnfurl[] = [];
  const homes = new Map<string, { type: string; blocks: unknown[] }>();
  const pendingUploads = new Map<string, { filename: string; length: number; content?: Buffer }>();
  const rules: Rule[] = [];
  let tsCounter = 0;
  let fileCounter = 0;
  let baseUrl = '';

  // Slack's ts is the time the message was stored (epoch seconds, microseconds), unique in a channel:
  // the real clock, moved on by a microsecond when two messages share one.
  const nextTs = () => {
    tsCounter = Math.max(tsCounter + 1, Date.now() * 1000);
    return `${Math.floor(tsCounter / 1_000_000)}.${String(tsCounter % 1_000_000).padStart(6, '0')}`;
  };

  const channelProblem = (channel: unknown): string | undefined => {
    if (typeof channel !== 'string' || channel === '') return 'channel_not_found';
    if (options.channels && !options.channels.includes(channel)) return 'channel_not_found';
    if (options.memberOf && !options.memberOf.includes(channel)) return 'not_in_channel';
    return undefined;
  };

  const takeRule = (method: string, args: Record<string, unknown>): Rule | undefined => {
    const rule = rules.find((r) => r.method === method && r.remaining > 0 && (!r.match || r.match(args)));
    if (rule) rule.remaining -= 1;
    return rule;
  };

  const handlers: Record<string, (args: Record<string, unknown>) => Record<string, unknown>> = {
    'auth.test': () => ({ ok: true, url: 'https://kernelseek-test.slack.com/', team: 'KernelSeek Test', user: 'kernelseek', team_id: 'T0KSTEST1', user_id: botUserId, bot_id: 'B0KSBOT01' }),
    'chat.postMessage': (args) => {
      const problem = channelProblem(args.channel) ?? blocksProblem(args.blocks);
      if (problem) return { ok: false, error: problem };
      const text = String(args.text ?? '');
      if (text.length > SLACK_LIMITS.textChars) return { ok: false, error: 'msg_too_long' };
      if (!text && !args.blocks) return { ok: false, error: 'no_text' };
      const threadTs = typeof args.thread_ts === 'string' ? args.thread_ts : undefined;
      if (threadTs && !messages.some((m) => m.channel === args.channel && m.ts === threadTs)) return { ok: false, error: 'thread_not_found' };
      const ts = nextTs();
      const blocks = args.blocks as unknown[] | undefined;
      messages.push({ channel: args.channel as string, ts, threadTs, text, blocks, user: botUserId, history: [{ text, blocks }], reactions: [] });
      return { ok: true, channel: args.channel, ts, message: { type: 'message', text, user: botUserId, ts, thread_ts: threadTs } };
    },
    'chat.update': (args) => {
      const message = messages.find((m) => m.channel === args.channel && m.ts === args.ts);
      if (!message) return { ok: false, error: channelProblem(args.channel) ?? 'message_not_found' };
      const problem = blocksProblem(args.blocks);
      if (problem) return { ok: false, error: problem };
      const text = String(args.text ?? '');
      if (text.length > SLACK_LIMITS.textChars) return { ok: false, error: 'msg_too_long' };
      message.text = text;
      message.blocks = args.blocks as unknown[] | undefined;
      message.history.push({ text, blocks: message.blocks });
      return { ok: true, channel: args.channel, ts: args.ts, text };
    },
    'chat.postEphemeral': (args) => {
      const problem = channelProblem(args.channel) ?? blocksProblem(args.blocks);
      if (problem) return { ok: false, error: problem };
      if (typeof args.user !== 'string') return { ok: false, error: 'user_not_found' };
      return { ok: true, message_ts: nextTs() };
    },
    'reactions.add': (args) => {
      const message = messages.find((m) => m.channel === args.channel && m.ts === args.timestamp);
      if (!message) return { ok: false, error: 'message_not_found' };
      if (message.reactions.includes(String(args.name))) return { ok: false, error: 'already_reacted' };
      message.reactions.push(String(args.name));
      return { ok: true };
    },
    'users.info': (args) => {
      const id = String(args.user ?? '');
      if (!/^[UW][A-Z0-9]{2,}$/.test(id)) return { ok: false, error: 'user_not_found' };
      const short = id.slice(1).toLowerCase().replace(/\d+$/, '');
      const display = short.charAt(0).toUpperCase() + short.slice(1);
      return { ok: true, user: { id, name: `user-${id.toLowerCase()}`, real_name: `${display} Example`, is_bot: false, profile: { display_name: display, real_name: `${display} Example` } } };
    },
    'chat.getPermalink': (args) => {
      const message = messages.find((m) => m.channel === args.channel && m.ts === args.message_ts);
      if (!message) return { ok: false, error: channelProblem(args.channel) ?? 'message_not_found' };
      return { ok: true, channel: args.channel, permalink: `https://kernelseek-test.slack.com/archives/${message.channel}/p${message.ts.replace('.', '')}` };
    },
    'chat.unfurl': (args) => {
      if (typeof args.channel !== 'string' || typeof args.ts !== 'string') return { ok: false, error: 'invalid_arguments' };
      const metadata = args.metadata as { entities?: Record<string, unknown>[] } | undefined;
      if (metadata) {
        if (options.workObjects === false) return { ok: false, error: 'feature_not_enabled' };
        const entities = metadata.entities;
        if (!Array.isArray(entities) || entities.length === 0) return { ok: false, error: 'invalid_metadata' };
        for (const e of entities as { entity_type?: string; url?: string; app_unfurl_url?: string; external_ref?: { id?: string }; entity_payload?: { attributes?: { title?: { text?: string } } } }[]) {
          // What @slack/types says chat.unfurl needs of an entity.
          if (!e.entity_type || !e.url || !e.app_unfurl_url || !e.external_ref?.id || !e.entity_payload?.attributes?.title?.text) return { ok: false, error: 'invalid_metadata' };
        }
        unfurls.push({ channel: args.channel, ts: args.ts, kind: 'work_object', payload: entities });
        return { ok: true };
      }
      const given = args.unfurls as Record<string, { blocks?: unknown[] }> | undefined;
      if (!given || typeof given !== 'object' || Object.keys(given).length === 0) return { ok: false, error: 'invalid_unfurls_format' };
      for (const u of Object.values(given)) {
        const problem = blocksProblem(u.blocks);
        if (problem) return { ok: false, error: problem };
      }
      unfurls.push({ channel: args.channel, ts: args.ts, kind: 'blocks', payload: given });
      return { ok: true };
    },
    'views.publish': (args) => {
      const view = (typeof args.view === 'string' ? JSON.parse(args.view) : args.view) as { type?: string; blocks?: unknown[] } | undefined;
      if (typeof args.user_id !== 'string' || !view || view.type !== 'home') return { ok: false, error: 'invalid_arguments' };
      if (!Array.isArray(view.blocks) || view.blocks.length > 100) return { ok: false, error: 'invalid_blocks' };
      homes.set(args.user_id, { type: view.type, blocks: view.blocks });
      return { ok: true, view: { id: `VHOME${args.user_id}`, ...view } };
    },
    'entity.presentDetails': (args) => {
      if (typeof args.trigger_id !== 'string' || !args.trigger_id) return { ok: false, error: 'invalid_trigger_id' };
      if (!args.metadata && !args.error) return { ok: false, error: 'invalid_metadata' };
      return { ok: true };
    },
    'conversations.info': (args) => {
      const problem = options.channels && !options.channels.includes(String(args.channel)) ? 'channel_not_found' : undefined;
      if (problem) return { ok: false, error: problem };
      return { ok: true, channel: { id: args.channel, name: `chan-${String(args.channel).toLowerCase()}`, is_member: !options.memberOf || options.memberOf.includes(String(args.channel)) } };
    },
    'assistant.threads.setStatus': (args) => {
      if (typeof args.status !== 'string' || typeof args.thread_ts !== 'string') return { ok: false, error: 'invalid_arguments' };
      const problem = channelProblem(args.channel_id);
      if (problem) return { ok: false, error: problem };
      if (!messages.some((m) => m.channel === args.channel_id && m.ts === args.thread_ts)) return { ok: false, error: 'thread_not_found' };
      // Slack rotates through at most 10 loading messages.
      if (args.loading_messages !== undefined && (!Array.isArray(args.loading_messages) || args.loading_messages.length > 10)) return { ok: false, error: 'invalid_arguments' };
      return { ok: true };
    },
    'apps.connections.open': () => ({ ok: true, url: socket.url }),
    'views.open': (args) => {
      if (typeof args.trigger_id !== 'string' || !args.trigger_id) return { ok: false, error: 'invalid_trigger_id' };
      const view = (typeof args.view === 'string' ? JSON.parse(args.view) : args.view) as Record<string, unknown> | undefined;
      if (!view || view.type !== 'modal') return { ok: false, error: 'invalid_arguments' };
      return { ok: true, view: { id: `V0KS${String(calls.length).padStart(6, '0')}`, ...view } };
    },
    'files.getUploadURLExternal': (args) => {
      const length = Number(args.length);
      if (!args.filename || !Number.isFinite(length) || length <= 0) return { ok: false, error: 'invalid_arguments' };
      fileCounter += 1;
      const id = `F0KS${String(fileCounter).padStart(6, '0')}`;
      pendingUploads.set(id, { filename: String(args.filename), length });
      return { ok: true, upload_url: `${baseUrl}/upload/${id}`, file_id: id };
    },
    'files.completeUploadExternal': (args) => {
      const list = args.files as { id: string; title?: string }[] | undefined;
      if (!Array.isArray(list) || list.length === 0) return { ok: false, error: 'invalid_arguments' };
      const channel = typeof args.channel_id === 'string' ? args.channel_id : undefined;
      if (channel) {
        const problem = channelProblem(channel);
        if (problem) return { ok: false, error: problem };
      }
      const done: { id: string; title: string | undefined; name: string }[] = [];
      for (const f of list) {
        const pending = pendingUploads.get(f.id);
        if (!pending?.content) return { ok: false, error: 'file_not_found' };
        pendingUploads.delete(f.id);
        files.push({
          id: f.id,
          filename: pending.filename,
          title: f.title,
          channel,
          threadTs: typeof args.thread_ts === 'string' ? args.thread_ts : undefined,
          initialComment: typeof args.initial_comment === 'string' ? args.initial_comment : undefined,
          content: pending.content,
        });
        done.push({ id: f.id, title: f.title, name: pending.filename });
      }
      return { ok: true, files: done };
    },
  };

  const server: Server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const raw = await readBody(req);
      if (options.latencyMs) await delay(options.latencyMs);
      const at = Date.now() - started;

      if (url.pathname.startsWith('/upload/')) {
        const id = url.pathname.slice('/upload/'.length);
        const pending = pendingUploads.get(id);
        calls.push({ method: 'upload', args: { file_id: id, bytes: raw.length }, at, outcome: pending ? 'ok' : 'file_not_found', token: undefined });
        if (!pending) return send(res, 404, { ok: false });
        pending.content = parseMultipart(raw, String(req.headers['content-type'] ?? '')) ?? raw;
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end(`OK - ${pending.content.length}`);
      }
      if (url.pathname.startsWith('/respond/')) {
        const id = url.pathname.slice('/respond/'.length);
        responses.push({ id, body: JSON.parse(raw.toString('utf8') || '{}') as Record<string, unknown>, at });
        return send(res, 200, { ok: true });
      }
      if (!url.pathname.startsWith('/api/')) return send(res, 404, { ok: false, error: 'unknown_path' });

      const method = url.pathname.slice('/api/'.length);
      const args = parseRequestBody(raw, String(req.headers['content-type'] ?? ''));
      const auth = String(req.headers.authorization ?? '');
      const token = auth.startsWith('Bearer ') ? auth.slice(7) : typeof args.token === 'string' ? args.token : undefined;
      const record = (outcome: string) => calls.push({ method, args, at, outcome, token });

      const handler = handlers[method];
      if (!handler) {
        record('unknown_method');
        return send(res, 200, { ok: false, error: 'unknown_method' });
      }
      if (!token) {
        record('not_authed');
        return send(res, 200, { ok: false, error: 'not_authed' });
      }
      const rule = takeRule(method, args);
      if (rule?.kind === 'rate_limited') {
        record('rate_limited');
        return send(res, 429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(rule.retryAfter ?? 1) });
      }
      if (rule?.kind === 'error') {
        record(rule.error!);
        return send(res, 200, { ok: false, error: rule.error });
      }
      const result = handler(args);
      record(result.ok ? 'ok' : String(result.error));
      return send(res, 200, result, options.scopes ? { 'x-oauth-scopes': options.scopes.join(',') } : {});
    } catch (error) {
      send(res, 500, { ok: false, error: 'fake_slack_crashed', detail: (error as Error).message });
    }
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;
  const socket = attachSocketMode(server, baseUrl);

  const fake: FakeSlack = {
    apiUrl: `${baseUrl}/api/`,
    baseUrl,
    botUserId,
    socket,
    calls,
    messages,
    files,
    responses,
    unfurls,
    homes,
    rateLimit(method, { times, retryAfter, match }) {
      rules.push({ method, remaining: times, kind: 'rate_limited', retryAfter, ...(match ? { match } : {}) });
    },
    fail(method, { error, times = 1, match }) {
      rules.push({ method, remaining: times, kind: 'error', error, ...(match ? { match } : {}) });
    },
    callsOf: (method) => calls.filter((c) => c.method === method),
    thread: (channel, threadTs) => messages.filter((m) => m.channel === channel && (m.ts === threadTs || m.threadTs === threadTs)),
    message: (channel, ts) => messages.find((m) => m.channel === channel && m.ts === ts),
    userPosted(m) {
      messages.push({ channel: m.channel, ts: m.ts, threadTs: m.threadTs, text: m.text, blocks: undefined, user: m.user, history: [{ text: m.text, blocks: undefined }], reactions: [] });
    },
    responseUrl: (id) => `${baseUrl}/respond/${id}`,
    async waitFor(predicate, timeoutMs = 10_000, what = 'condition') {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(fake)) {
        if (Date.now() > deadline) throw new Error(`fake Slack: timed out after ${timeoutMs} ms waiting for ${what}`);
        await delay(10);
      }
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        socket.close();
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
  return fake;
}
