import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A minimal local stand-in for the Slack Web API methods the digest uses (chat.postMessage and the
 * three steps of files.uploadV2), driven through the real @slack/web-api client. It records every
 * call and can be told to fail a method. (The Slack app's shared fake server replaces this once it
 * lands on main.)
 */
export interface SlackCall {
  method: string;
  token: string | undefined;
  args: Record<string, unknown>;
}

export interface UploadedFile {
  fileId: string;
  filename: string;
  bytes: Buffer;
  channel?: string;
  title?: string;
  threadTs?: string;
}

type Failure = { error: string } | { status: number; retryAfter?: number };

export interface FakeSlack {
  url: string;
  calls: SlackCall[];
  messages: { channel: string; ts: string; text: string; blocks: unknown[] }[];
  files: UploadedFile[];
  /** Makes the next `times` calls of `method` fail as given. */
  failNext(method: string, failure: Failure, times?: number): void;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function parseArgs(req: IncomingMessage, raw: Buffer): Record<string, unknown> {
  const type = req.headers['content-type'] ?? '';
  if (type.includes('application/json')) return JSON.parse(raw.toString('utf8') || '{}') as Record<string, unknown>;
  const args: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(raw.toString('utf8'))) {
    // The client JSON-encodes objects and arrays (blocks, files) inside form fields.
    args[k] = /^[[{]/.test(v) ? JSON.parse(v) : v;
  }
  return args;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The file bytes of an upload, however the client framed them. */
function fileBytes(req: IncomingMessage, raw: Buffer): Buffer {
  const type = req.headers['content-type'] ?? '';
  if (type.includes('application/json')) {
    const body = JSON.parse(raw.toString('utf8')) as { body?: { type?: string; data?: number[] } };
    if (body.body?.type === 'Buffer' && body.body.data) return Buffer.from(body.body.data);
  }
  const at = raw.indexOf(PNG_SIGNATURE);
  if (at >= 0 && type.includes('multipart')) {
    const end = raw.lastIndexOf(Buffer.from('\r\n--'));
    return raw.subarray(at, end > at ? end : raw.length);
  }
  return raw;
}

export async function startFakeSlack(): Promise<FakeSlack> {
  const calls: SlackCall[] = [];
  const messages: FakeSlack['messages'] = [];
  const files: UploadedFile[] = [];
  const pendingUploads = new Map<string, { filename: string; bytes?: Buffer }>();
  const failures = new Map<string, { failure: Failure; times: number }>();
  let ts = 1773478800;
  let fileSeq = 0;
  let base = '';

  const server: Server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      if (path.startsWith('/upload/')) {
        const id = path.slice('/upload/'.length);
        const upload = pendingUploads.get(id);
        if (!upload) return reply(404, { ok: false });
        upload.bytes = fileBytes(req, raw);
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end(`OK - ${upload.bytes.length}`);
      }
      const method = path.replace(/^\/api\//, '');
      const args = parseArgs(req, raw);
      const auth = req.headers.authorization;
      calls.push({ method, token: auth?.replace(/^Bearer /, '') ?? (args.token as string | undefined), args });
      const failing = failures.get(method);
      if (failing && failing.times > 0) {
        failing.times -= 1;
        const f = failing.failure;
        if ('error' in f) return reply(200, { ok: false, error: f.error });
        return reply(f.status, { ok: false, error: 'ratelimited' }, f.retryAfter !== undefined ? { 'retry-after': String(f.retryAfter) } : {});
      }
      switch (method) {
        case 'chat.postMessage': {
          ts += 1;
          const message = { channel: String(args.channel), ts: `${ts}.000100`, text: String(args.text ?? ''), blocks: (args.blocks as unknown[]) ?? [] };
          messages.push(message);
          return reply(200, { ok: true, channel: message.channel, ts: message.ts, message: { text: message.text } });
        }
        case 'files.getUploadURLExternal': {
          fileSeq += 1;
          const id = `F${String(fileSeq).padStart(8, '0')}`;
          pendingUploads.set(id, { filename: String(args.filename) });
          return reply(200, { ok: true, upload_url: `${base}/upload/${id}`, file_id: id });
        }
        case 'files.completeUploadExternal': {
          const list = args.files as { id: string; title?: string }[];
          const done = [];
          for (const f of list) {
            const upload = pendingUploads.get(f.id);
            if (!upload?.bytes) return reply(200, { ok: false, error: 'file_not_found' });
            files.push({
              fileId: f.id,
              filename: upload.filename,
              bytes: upload.bytes,
              title: f.title,
              ...(args.channel_id ? { channel: String(args.channel_id) } : {}),
              ...(args.thread_ts ? { threadTs: String(args.thread_ts) } : {}),
            });
            done.push({ id: f.id, title: f.title ?? upload.filename });
          }
          return reply(200, { ok: true, files: done });
        }
        default:
          return reply(200, { ok: false, error: 'unknown_method' });
      }
    })().catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/api/`,
    calls,
    messages,
    files,
    failNext(method, failure, times = 1) {
      failures.set(method, { failure, times });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
