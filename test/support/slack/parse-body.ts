/**
 * Request bodies as the Slack Web API client sends them: form-urlencoded (nested values JSON-encoded),
 * JSON, or multipart/form-data (file bytes to an upload URL).
 */

/** Fields the client JSON-encodes inside a form body. */
const JSON_FIELDS = new Set(['blocks', 'attachments', 'files', 'metadata', 'view', 'unfurls', 'loading_messages']);

export function parseRequestBody(raw: Buffer, contentType: string): Record<string, unknown> {
  const text = raw.toString('utf8');
  if (contentType.includes('application/json')) return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  if (contentType.includes('multipart/form-data')) {
    const out: Record<string, unknown> = {};
    for (const part of splitMultipart(raw, contentType)) out[part.name] = part.filename ? part.data : part.data.toString('utf8');
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    if (JSON_FIELDS.has(key)) {
      try {
        out[key] = JSON.parse(value);
        continue;
      } catch {
        // Slack rejects a malformed blocks string; keep it raw so the handler sees what was sent.
      }
    }
    out[key] = value;
  }
  return out;
}

interface Part {
  name: string;
  filename: string | undefined;
  data: Buffer;
}

function splitMultipart(raw: Buffer, contentType: string): Part[] {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!m) return [];
  const boundary = Buffer.from(`--${m[1] ?? m[2]}`);
  const parts: Part[] = [];
  let start = raw.indexOf(boundary);
  while (start !== -1) {
    const next = raw.indexOf(boundary, start + boundary.length);
    if (next === -1) break;
    const chunk = raw.subarray(start + boundary.length + 2, next - 2); // drop CRLF after boundary and before next
    const headerEnd = chunk.indexOf('\r\n\r\n');
    if (headerEnd !== -1) {
      const headers = chunk.subarray(0, headerEnd).toString('utf8');
      const name = /name="([^"]*)"/i.exec(headers)?.[1] ?? '';
      const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
      parts.push({ name, filename, data: chunk.subarray(headerEnd + 4) });
    }
    start = next;
  }
  return parts;
}

/** The file bytes of a multipart upload (the first part with a filename, else the first part). */
export function parseMultipart(raw: Buffer, contentType: string): Buffer | undefined {
  if (!contentType.includes('multipart/form-data')) return undefined;
  const parts = splitMultipart(raw, contentType);
  return (parts.find((p) => p.filename !== undefined) ?? parts[0])?.data;
}
