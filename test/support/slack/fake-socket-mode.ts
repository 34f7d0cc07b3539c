import { setTimeout as delay } from 'node:timers/promises';
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Slack's Socket Mode endpoint, for the fake Web API server: `apps.connections.open` hands out a
 * ws:// URL on the same server, the client gets `hello`, and the test sends envelopes
 * (`slash_commands`, `events_api`, `interactive`) and waits for the app's ack. The WebSocket framing
 * (RFC 6455: text, ping/pong, close; client frames masked) is written here so the test needs no
 * WebSocket package; the client side is @slack/socket-mode's own.
 */
export interface FakeSocketMode {
  /** The URL `apps.connections.open` returns. */
  url: string;
  connections(): number;
  waitForConnection(timeoutMs?: number): Promise<void>;
  /** Sends an envelope to the connected app; resolves with its ack and how long it took. */
  send(type: 'slash_commands' | 'events_api' | 'interactive', payload: Record<string, unknown>, timeoutMs?: number): Promise<{ ackMs: number; payload: unknown }>;
  close(): void;
}

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

function frame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x80 | opcode, len]) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (len >= 126 && len < 65536) {
    head[0] = 0x80 | opcode;
    head[1] = 126;
    head.writeUInt16BE(len, 2);
  } else if (len >= 65536) {
    head[0] = 0x80 | opcode;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(len), 2);
  }
  return Buffer.concat([head, payload]);
}

/** Parses complete frames off the front of `buf`; returns them and what is left. */
function parseFrames(buf: Buffer): { frames: { opcode: number; payload: Buffer }[]; rest: Buffer } {
  const frames: { opcode: number; payload: Buffer }[] = [];
  let offset = 0;
  for (;;) {
    if (buf.length - offset < 2) break;
    const opcode = buf[offset]! & 0x0f;
    const masked = (buf[offset + 1]! & 0x80) !== 0;
    let len = buf[offset + 1]! & 0x7f;
    let pos = offset + 2;
    if (len === 126) {
      if (buf.length < pos + 2) break;
      len = buf.readUInt16BE(pos);
      pos += 2;
    } else if (len === 127) {
      if (buf.length < pos + 8) break;
      len = Number(buf.readBigUInt64BE(pos));
      pos += 8;
    }
    const maskLen = masked ? 4 : 0;
    if (buf.length < pos + maskLen + len) break;
    const mask = masked ? buf.subarray(pos, pos + 4) : undefined;
    const payload = Buffer.from(buf.subarray(pos + maskLen, pos + maskLen + len));
    if (mask) for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i % 4]!;
    frames.push({ opcode, payload });
    offset = pos + maskLen + len;
  }
  return { frames, rest: buf.subarray(offset) };
}

export function attachSocketMode(server: Server, baseUrl: string): FakeSocketMode {
  const sockets = new Set<Duplex>();
  const waiting = new Map<string, { resolve: (v: { ackMs: number; payload: unknown }) => void; sentAt: number }>();
  const path = '/socket-mode';

  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    if (!req.url?.startsWith(path)) return socket.destroy();
    const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}${GUID}`).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    sockets.add(socket);
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      const { frames, rest } = parseFrames(Buffer.concat([pending, chunk]));
      pending = rest;
      for (const f of frames) {
        if (f.opcode === 0x9) socket.write(frame(0xa, f.payload));
        else if (f.opcode === 0x8) {
          socket.end(frame(0x8, Buffer.alloc(0)));
          sockets.delete(socket);
        } else if (f.opcode === 0x1) {
          const message = JSON.parse(f.payload.toString('utf8')) as { envelope_id?: string; payload?: unknown };
          const w = message.envelope_id ? waiting.get(message.envelope_id) : undefined;
          if (w) {
            waiting.delete(message.envelope_id!);
            w.resolve({ ackMs: performance.now() - w.sentAt, payload: message.payload });
          }
        }
      }
    });
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => sockets.delete(socket));
    const hello = { type: 'hello', num_connections: sockets.size, debug_info: { host: 'fake', approximate_connection_time: 3600 }, connection_info: { app_id: 'A0KSAPP01' } };
    socket.write(frame(0x1, Buffer.from(JSON.stringify(hello))));
  });

  const api: FakeSocketMode = {
    url: `${baseUrl.replace(/^http/, 'ws')}${path}`,
    connections: () => sockets.size,
    async waitForConnection(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (sockets.size === 0) {
        if (Date.now() > deadline) throw new Error('fake Socket Mode: no app connected');
        await delay(20);
      }
    },
    send(type, payload, timeoutMs = 10_000) {
      const socket = [...sockets][0];
      if (!socket) return Promise.reject(new Error('fake Socket Mode: no app connected'));
      const envelopeId = randomBytes(8).toString('hex');
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`fake Socket Mode: no ack for ${type} within ${timeoutMs} ms`)), timeoutMs);
        waiting.set(envelopeId, { resolve: (v) => (clearTimeout(timer), resolve(v)), sentAt: performance.now() });
        const envelope = { envelope_id: envelopeId, type, payload, accepts_response_payload: type !== 'events_api', retry_attempt: 0, retry_reason: '' };
        socket.write(frame(0x1, Buffer.from(JSON.stringify(envelope))));
      });
    },
    close() {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
  };
  return api;
}
