import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseQuery } from 'node:querystring';
import type { App, Receiver, ReceiverEvent } from '@slack/bolt';
import type { Logger } from '../../core/logger.js';
import { BodyBudgetError, BodyTooLargeError, createBodyBudget, readBoundedBody, type BodyBudget } from './read-body.js';
import type { ReplayGuard } from './replay-guard.js';
import { checkHeaders, isValidSignature, MAX_BODY_BYTES, MAX_PENDING_BODY_BYTES, SSL_CHECK_MAX_BYTES } from './request-checks.js';

/** An events request is answered once its listeners are done, or by then: Slack retries after 3 s. */
export const EVENT_ANSWER_DEADLINE_MS = 2500;

/** What listeners can ask of the HTTP answer (as `context.slackResponse`). */
export interface SlackResponseState {
  /** True once Slack has been answered: a failure after that is not retried by Slack. */
  sent(): boolean;
}

export interface ReceiverRoute {
  path: string;
  method: string[];
  /** Match every path under `path` (e.g. `/runs/`), not only `path` itself. */
  prefix?: boolean;
  handler(req: IncomingMessage, res: ServerResponse): void;
}

export interface SignedReceiverOptions {
  signingSecret: string;
  /** Where Slack posts (the manifest's request URLs). */
  path: string;
  routes?: ReceiverRoute[];
  replay: ReplayGuard;
  logger: Logger;
  maxBodyBytes?: number;
  maxPendingBodyBytes?: number;
  nowSeconds?: () => number;
}

/**
 * Bolt's HTTP receiver, rebuilt around one rule: refuse before reading. Bolt's own buffers the whole
 * body before it looks at the signature (an unsigned 400 MB post costs 400 MB), checks only that a
 * request is not too old, and acknowledges an event before its listeners have stored anything.
 * Here, in order:
 *
 * 1. size and signature headers are judged before the body is read: 413 or 401 at once, and the
 *    connection is closed rather than drained;
 * 2. the body is counted as it streams and abandoned past the limit (413), or past what all
 *    requests together may hold (503);
 * 3. the HMAC is checked (401), then a request that is not an event with an id is claimed once
 *    (a replay of it is answered 200 and dropped: the event-id check covers the rest);
 * 4. commands, actions and views are answered at their `ack()` (Slack's 3 seconds); events are
 *    answered when their listeners are done, 500 when they failed (Slack then retries), or at
 *    EVENT_ANSWER_DEADLINE_MS.
 */
export class SignedRequestReceiver implements Receiver {
  private app: App | undefined;
  private server: Server | undefined;
  private readonly budget: BodyBudget;
  private readonly limit: number;
  private readonly now: () => number;

  constructor(private readonly options: SignedReceiverOptions) {
    this.limit = options.maxBodyBytes ?? MAX_BODY_BYTES;
    this.budget = createBodyBudget(options.maxPendingBodyBytes ?? MAX_PENDING_BODY_BYTES);
    this.now = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  }

  init(app: App): void {
    this.app = app;
  }

  async start(port: number): Promise<Server> {
    const server = createServer((req, res) => {
      this.route(req, res).catch((error: unknown) => {
        this.options.logger.error({ err: error, url: req.url }, 'Slack request failed');
        refuse(req, res, 500, 'internal error');
      });
    });
    // A slow sender holds a socket, not memory; still, give up on it in bounded time.
    server.headersTimeout = 10_000;
    server.requestTimeout = 20_000;
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, resolve));
    this.server = server;
    return server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
  }

  port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    const method = (req.method ?? 'GET').toUpperCase();
    if (pathname === this.options.path && method === 'POST') return this.receive(req, res);
    const route = this.options.routes?.find((r) => (r.prefix ? pathname.startsWith(r.path) : r.path === pathname) && r.method.includes(method));
    if (route) return route.handler(req, res);
    refuse(req, res, 404, 'not found');
  }

  private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { logger } = this.options;
    const verdict = checkHeaders(req.headers, this.now(), this.limit);
    if (!verdict.ok) {
      if (verdict.sslCheckCandidate && (await this.answeredSslCheck(req, res))) return;
      logger.warn({ status: verdict.status, reason: verdict.reason, ip: req.socket.remoteAddress }, 'Slack request refused');
      return refuse(req, res, verdict.status, verdict.reason);
    }
    let read: { body: Buffer; release: () => void };
    try {
      read = await readBoundedBody(req, this.limit, this.budget);
    } catch (error) {
      const [status, reason] = error instanceof BodyTooLargeError ? [413, error.message] : error instanceof BodyBudgetError ? [503, error.message] : [400, (error as Error).message];
      logger.warn({ status, reason, ip: req.socket.remoteAddress }, 'Slack request refused');
      return refuse(req, res, status, reason);
    }
    try {
      if (!isValidSignature(this.options.signingSecret, verdict.timestamp, read.body, verdict.signature)) {
        logger.warn({ status: 401, ip: req.socket.remoteAddress }, 'Slack request refused: signature mismatch');
        return refuse(req, res, 401, 'signature mismatch');
      }
      const body = parseBody(read.body, req.headers['content-type']);
      if (!body) return refuse(req, res, 400, 'malformed body');
      if (body.ssl_check === '1') return void res.writeHead(200).end();
      if (body.type === 'url_verification') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ challenge: body.challenge }));
      }
      const hasEventId = body.type === 'event_callback' && typeof body.event_id === 'string';
      if (!hasEventId && !(await this.options.replay.claim(verdict.timestamp, verdict.signature))) {
        logger.warn({ ip: req.socket.remoteAddress }, 'replayed Slack request dropped (this signature was seen before)');
        return void res.writeHead(200).end();
      }
      read.release();
      await this.dispatch(req, res, body);
    } finally {
      read.release();
    }
  }

  /** Slack's ssl_check probe may come unsigned; it is small, read within a tiny limit, and acts on nothing. */
  private async answeredSslCheck(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    try {
      const { body, release } = await readBoundedBody(req, SSL_CHECK_MAX_BYTES, this.budget);
      release();
      if (parseQuery(body.toString('utf8')).ssl_check !== '1') return false;
      res.writeHead(200).end();
      return true;
    } catch {
      return false;
    }
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): Promise<void> {
    const isEvent = body.type === 'event_callback';
    let acked = false;
    const answer = (status: number, payload?: unknown) => {
      if (res.headersSent) return;
      if (payload === undefined || payload === '') return void res.writeHead(status).end();
      if (typeof payload === 'string') return void res.writeHead(status).end(payload);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    };
    const slackResponse: SlackResponseState = { sent: () => res.headersSent };
    const deadline = setTimeout(() => answer(acked ? 200 : 404), EVENT_ANSWER_DEADLINE_MS);
    const retryNum = Number(header(req, 'x-slack-retry-num'));
    const retryReason = header(req, 'x-slack-retry-reason');
    const event: ReceiverEvent = {
      body,
      ...(Number.isInteger(retryNum) ? { retryNum } : {}),
      ...(retryReason ? { retryReason } : {}),
      customProperties: { slackResponse },
      ack: async (response?: unknown) => {
        if (acked) throw new Error('ack() was called twice for one Slack request');
        acked = true;
        if (!isEvent) answer(200, response);
      },
    };
    try {
      await this.app!.processEvent(event);
      answer(acked ? 200 : 404);
    } catch (error) {
      // Not answered yet: a 500 makes Slack retry (events); answered: the listener has told the person.
      if (!res.headersSent) this.options.logger.warn({ err: error }, 'a Slack request failed before it was answered: 500, Slack retries events');
      answer(500);
    } finally {
      clearTimeout(deadline);
    }
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

function parseBody(raw: Buffer, contentType: string | undefined): Record<string, unknown> | undefined {
  try {
    const text = raw.toString('utf8');
    if ((contentType ?? '').startsWith('application/x-www-form-urlencoded')) {
      const fields = parseQuery(text);
      if (typeof fields.payload === 'string') return JSON.parse(fields.payload) as Record<string, unknown>;
      return fields as Record<string, unknown>;
    }
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** How long a refused request's connection stays open, unread, so the client reads the answer first. */
const LINGER_MS = 1000;
/** What is still read (and dropped) of a refused body: a small one ends and its connection is kept. */
const DRAIN_BYTES = 64 * 1024;

/**
 * Answers without reading the rest of the body into memory. The rest of a small body is dropped as
 * it arrives and the connection kept, as for any answered request. A large one is not read: closing
 * at once would reset the connection while the client is still sending, and a reset can destroy
 * the answer before the client reads it; so the socket is paused (TCP holds the sender back,
 * nothing more is read) and closed a second later.
 */
function refuse(req: IncomingMessage, res: ServerResponse, status: number, reason: string): void {
  if (res.headersSent) return;
  res.once('finish', () => {
    if (req.complete) return;
    const socket = req.socket;
    let dropped = 0;
    const cut = () => {
      req.off('data', count);
      socket.pause();
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    };
    const count = (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > DRAIN_BYTES) cut();
    };
    req.on('data', count).once('end', () => req.off('data', count));
  });
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${reason}\n`);
}
