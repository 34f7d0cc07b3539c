import { setTimeout as delay } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PromptCache, estimateTokens, type CacheUsage } from './cache-model.js';

/**
 * A local HTTP server that speaks the Anthropic Messages API (POST /v1/messages, streaming SSE and
 * plain JSON) and replays a scripted conversation. Every request is recorded. Tests point the real
 * SDK at it with ANTHROPIC_BASE_URL, so retries, streaming and error parsing are the SDK's own.
 */

export type ReplyBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; name: string; input: Record<string, unknown>; id?: string };

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

export interface MessageReply {
  content: ReplyBlock[];
  /** Default: tool_use when the content has a tool_use block, else end_turn. */
  stopReason?: StopReason;
  stopDetails?: { type: 'refusal'; category: string | null; explanation: string | null };
  /** Default: estimated from the content. */
  outputTokens?: number;
  /**
   * Streamed replies only: send this many SSE events (message_start is the first), then nothing more
   * while the connection stays open, as a response that stalls mid-stream.
   */
  stallAfterEvents?: number;
}

export interface ErrorReply {
  error: { status: number; type: string; message: string; errorCode?: string };
  /** Seconds, sent as `retry-after`. */
  retryAfter?: number;
  /** Send a 200 stream that fails with an `error` event after message_start (overloaded mid-stream). */
  midStream?: boolean;
}

export type Reply = MessageReply | ErrorReply;

export interface RecordedRequest {
  index: number;
  at: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown> & { messages: { role: string; content: unknown }[]; stream?: boolean };
  /** Usage the server computed for it (absent for scripted errors). */
  usage?: CacheUsage;
  reply?: Reply;
}

export type ScriptStep = Reply | ((request: RecordedRequest) => Reply | Promise<Reply>);

export interface FakeAnthropic {
  url: string;
  requests: RecordedRequest[];
  /** Appends steps to the script. */
  enqueue(...steps: ScriptStep[]): void;
  /** Steps not consumed yet. */
  remaining(): number;
  close(): Promise<void>;
}

export interface FakeAnthropicOptions {
  script?: ScriptStep[];
  /** Used when the script is empty; without it an empty script answers 400 (the run fails loudly). */
  fallback?: (request: RecordedRequest) => Reply | Promise<Reply>;
  minCacheableTokens?: number;
  /** Artificial latency per reply, in ms. */
  latencyMs?: number;
  /**
   * The Models API (GET /v1/models/{id}): these ids exist (default: every id); with `apiKeys`, only
   * those keys are accepted there (401 otherwise), as the real API refuses an unknown key.
   */
  models?: string[];
  apiKeys?: string[];
}

const isError = (r: Reply): r is ErrorReply => 'error' in r;

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req'), ...headers });
  res.end(JSON.stringify(body));
}

function errorBody(e: ErrorReply['error']) {
  return {
    type: 'error',
    error: { type: e.type, message: e.message, ...(e.errorCode ? { details: { error_code: e.errorCode } } : {}) },
    request_id: newId('req'),
  };
}

function buildMessage(reply: MessageReply, model: string, usage: CacheUsage) {
  const content = reply.content.map((b) =>
    b.type === 'text' ? { type: 'text', text: b.text, citations: null } : { type: 'tool_use', id: b.id ?? newId('toolu'), name: b.name, input: b.input },
  );
  const stopReason = reply.stopReason ?? (reply.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  return {
    id: newId('msg'),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    stop_details: reply.stopDetails ?? null,
    container: null,
    usage: {
      input_tokens: usage.input_tokens,
      output_tokens: reply.outputTokens ?? Math.max(1, estimateTokens(reply.content)),
      cache_read_input_tokens: usage.cache_read_input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
      cache_creation: usage.cache_creation,
      server_tool_use: null,
      service_tier: 'standard',
    },
  };
}

function writeEvent(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function streamMessage(res: ServerResponse, message: ReturnType<typeof buildMessage>, failMidStream?: ErrorReply['error'], stallAfterEvents?: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': newId('req') });
  const { content, stop_reason, stop_details, usage } = message;
  let sent = 0;
  const sse = (r: ServerResponse, event: string, data: unknown) => {
    if (stallAfterEvents !== undefined && sent >= stallAfterEvents) return;
    sent++;
    writeEvent(r, event, data);
  };
  sse(res, 'message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, stop_details: null, usage: { ...usage, output_tokens: 1 } } });
  if (failMidStream) {
    sse(res, 'error', { type: 'error', error: { type: failMidStream.type, message: failMidStream.message } });
    res.end();
    return;
  }
  content.forEach((block, index) => {
    if (block.type === 'text') {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '', citations: null } });
      // Several deltas, as the real API sends.
      const text = block.text as string;
      for (let i = 0; i < text.length; i += 200) {
        sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: text.slice(i, i + 200) } });
      }
    } else {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      const json = JSON.stringify(block.input);
      // A max_tokens cut-off leaves the last tool call's JSON unfinished, as the real API does.
      const cut = stop_reason === 'max_tokens' && index === content.length - 1 ? json.slice(0, Math.max(1, Math.floor(json.length / 2))) : json;
      for (let i = 0; i < cut.length; i += 120) {
        sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: cut.slice(i, i + 120) } });
      }
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index });
  });
  sse(res, 'message_delta', {
    type: 'message_delta',
    delta: { stop_reason, stop_sequence: null, stop_details },
    usage: {
      output_tokens: usage.output_tokens,
      input_tokens: usage.input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
    },
  });
  sse(res, 'message_stop', { type: 'message_stop' });
  // A stalled stream stays open, silent, until the client gives up (or the server closes).
  if (stallAfterEvents === undefined || sent < stallAfterEvents) res.end();
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const script: ScriptStep[] = [...(options.script ?? [])];
  const requests: RecordedRequest[] = [];
  const cache = new PromptCache({ minCacheableTokens: options.minCacheableTokens ?? 1024 });

  const server: Server = createServer((req, res) => {
    void (async () => {
      const modelRoute = req.method === 'GET' ? /^\/v1\/models\/([^/?]+)/.exec(req.url ?? '') : null;
      if (modelRoute) {
        // The SDK sends the key as x-api-key or as a bearer token, depending on its version.
        const key = String(req.headers['x-api-key'] ?? String(req.headers.authorization ?? '').replace(/^Bearer /, ''));
        if (options.apiKeys && !options.apiKeys.includes(key)) return sendJson(res, 401, errorBody({ status: 401, type: 'authentication_error', message: 'invalid x-api-key' }));
        const id = decodeURIComponent(modelRoute[1]!);
        if (options.models && !options.models.includes(id)) return sendJson(res, 404, errorBody({ status: 404, type: 'not_found_error', message: `model: ${id}` }));
        return sendJson(res, 200, { type: 'model', id, display_name: `Fake ${id}`, created_at: '2026-01-01T00:00:00Z' });
      }
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages')) {
        sendJson(res, 404, errorBody({ status: 404, type: 'not_found_error', message: `fake server: no route ${req.method} ${req.url}` }));
        return;
      }
      let body: RecordedRequest['body'];
      try {
        body = JSON.parse(await readBody(req)) as RecordedRequest['body'];
      } catch {
        sendJson(res, 400, errorBody({ status: 400, type: 'invalid_request_error', message: 'fake server: body is not JSON' }));
        return;
      }
      const recorded: RecordedRequest = { index: requests.length, at: Date.now(), headers: req.headers, body };
      requests.push(recorded);
      const step = script.shift();
      let reply: Reply;
      if (step === undefined) {
        if (!options.fallback) {
          sendJson(res, 400, errorBody({ status: 400, type: 'invalid_request_error', message: `fake server: the script has no reply for request #${recorded.index}` }));
          return;
        }
        reply = await options.fallback(recorded);
      } else {
        reply = typeof step === 'function' ? await step(recorded) : step;
      }
      recorded.reply = reply;
      if (options.latencyMs) await delay(options.latencyMs);
      if (isError(reply) && !reply.midStream) {
        sendJson(res, reply.error.status, errorBody(reply.error), reply.retryAfter !== undefined ? { 'retry-after': String(reply.retryAfter) } : {});
        return;
      }
      const usage = cache.account(body);
      recorded.usage = usage;
      if (isError(reply)) {
        streamMessage(res, buildMessage({ content: [] }, String(body.model), usage), reply.error);
        return;
      }
      const message = buildMessage(reply, String(body.model), usage);
      if (body.stream) streamMessage(res, message, undefined, reply.stallAfterEvents);
      else sendJson(res, 200, message);
    })().catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorBody({ status: 500, type: 'api_error', message: `fake server failed: ${String(error)}` }));
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...steps) => void script.push(...steps),
    remaining: () => script.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
