import { request } from 'node:http';

/**
 * Sends a large body to a URL the way an attacker would: streamed in one reused chunk (so the
 * sender's own memory stays flat), with or without a declared length, and notes when the answer
 * came. A server that refuses early closes the connection mid-upload; that is expected, and the
 * status it answered is what counts.
 */
export interface UploadResult {
  status: number | undefined;
  /** Milliseconds from the first byte sent to the answer's headers. */
  answeredMs: number | undefined;
  /** Bytes handed to the socket before the upload stopped. */
  sentBytes: number;
  error?: string;
}

/**
 * `holdOpenMs`: after the last byte, keep the request open (never end it) for that long — a body
 * that is still arriving holds the server's memory; then report no answer.
 */
export function upload(url: string, options: { bytes: number; headers?: Record<string, string>; chunked?: boolean; timeoutMs?: number; holdOpenMs?: number }): Promise<UploadResult> {
  const chunk = Buffer.alloc(1024 * 1024, 0x61);
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (!options.chunked) headers['content-length'] = String(options.bytes);
  return new Promise((resolve) => {
    const t0 = performance.now();
    let sent = 0;
    let result: UploadResult | undefined;
    const done = (r: Partial<UploadResult>) => {
      if (result) return;
      result = { status: undefined, answeredMs: undefined, sentBytes: sent, ...r };
      clearTimeout(timer);
      req.destroy();
      resolve(result);
    };
    const req = request(url, { method: 'POST', headers });
    const timer = setTimeout(() => done({ error: 'no answer in time' }), options.timeoutMs ?? 10_000);
    req.on('response', (res) => {
      const answeredMs = performance.now() - t0;
      res.resume();
      done({ status: res.statusCode, answeredMs, sentBytes: sent });
    });
    req.on('error', (error) => setTimeout(() => done({ error: error.message }), 200));
    const pump = () => {
      while (sent < options.bytes && !result) {
        const n = Math.min(chunk.length, options.bytes - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void req.once('drain', pump);
      }
      if (result) return;
      if (options.holdOpenMs !== undefined) return void setTimeout(() => done({ error: 'held open, no answer' }), options.holdOpenMs);
      req.end();
    };
    pump();
  });
}
