import { createHash } from 'node:crypto';

/**
 * A model of the Messages API's prompt cache, so usage figures from the fake server behave like the
 * real ones: a request's blocks (tools, system, message content) form a prefix; a block with
 * `cache_control` is a breakpoint; a breakpoint's prefix is read from the cache when an identical
 * prefix ending at that block or up to 20 blocks before it was written earlier (and has not
 * expired), and written otherwise. Prefixes under the minimum cacheable length are never cached.
 * Tokens are estimated at 4 characters each: the figures are relative, not the real tokenizer's.
 */
export interface CacheUsage {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  /** Every token of the request (read + written + uncached). */
  total: number;
  breakpoints: number;
}

const LOOKBACK_BLOCKS = 20;

export function estimateTokens(value: unknown): number {
  return Math.ceil(JSON.stringify(value).length / 4);
}

interface Block {
  tokens: number;
  ttl: '5m' | '1h' | null;
  key: string;
}

function withoutCacheControl(block: unknown): unknown {
  if (!block || typeof block !== 'object') return block;
  const { cache_control: _omit, ...rest } = block as Record<string, unknown>;
  return rest;
}

function blocksOf(body: Record<string, unknown>): Block[] {
  const out: Block[] = [];
  const push = (raw: unknown) => {
    const cc = (raw as { cache_control?: { ttl?: '5m' | '1h' } } | null)?.cache_control;
    const plain = withoutCacheControl(raw);
    out.push({ tokens: estimateTokens(plain), ttl: cc ? (cc.ttl ?? '5m') : null, key: JSON.stringify(plain) });
  };
  for (const tool of (body.tools as unknown[] | undefined) ?? []) push(tool);
  const system = body.system;
  if (typeof system === 'string') push({ type: 'text', text: system });
  else for (const block of (system as unknown[] | undefined) ?? []) push(block);
  for (const message of (body.messages as { role: string; content: unknown }[] | undefined) ?? []) {
    const content = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content as unknown[]);
    content.forEach((block, i) => {
      // The role is part of what the model sees: the same block in another role is another prefix.
      const b = i === 0 ? { ...(block as object), __role: message.role } : block;
      const cc = (block as { cache_control?: { ttl?: '5m' | '1h' } }).cache_control;
      const plain = withoutCacheControl(b);
      out.push({ tokens: estimateTokens(withoutCacheControl(block)), ttl: cc ? (cc.ttl ?? '5m') : null, key: JSON.stringify(plain) });
    });
  }
  return out;
}

export class PromptCache {
  private readonly entries = new Map<string, number>();
  constructor(private readonly options: { minCacheableTokens: number; now?: () => number } = { minCacheableTokens: 1024 }) {}

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** Computes the usage of one request and updates the cache as the API would. */
  account(body: Record<string, unknown>): CacheUsage {
    const blocks = blocksOf(body);
    const model = String(body.model ?? '');
    const hashes: string[] = [];
    const cumulative: number[] = [];
    let h = createHash('sha256').update(model).digest('hex');
    let sum = 0;
    for (const block of blocks) {
      h = createHash('sha256').update(h).update(block.key).digest('hex');
      sum += block.tokens;
      hashes.push(h);
      cumulative.push(sum);
    }
    const total = sum;
    const now = this.now();
    const live = (hash: string) => (this.entries.get(hash) ?? 0) > now;
    const breakpoints = blocks.map((b, i) => (b.ttl ? i : -1)).filter((i) => i >= 0);
    let readEnd = -1;
    for (const bp of breakpoints) {
      for (let j = bp; j >= Math.max(0, bp - LOOKBACK_BLOCKS); j--) {
        if (live(hashes[j]!)) {
          readEnd = Math.max(readEnd, j);
          break;
        }
      }
    }
    const read = readEnd >= 0 ? cumulative[readEnd]! : 0;
    let written5m = 0;
    let written1h = 0;
    let writtenUpTo = read;
    for (const bp of breakpoints) {
      const upTo = cumulative[bp]!;
      const ttl = blocks[bp]!.ttl!;
      if (upTo < this.options.minCacheableTokens) continue;
      this.entries.set(hashes[bp]!, now + (ttl === '1h' ? 3_600_000 : 300_000));
      if (upTo > writtenUpTo) {
        if (ttl === '1h') written1h += upTo - writtenUpTo;
        else written5m += upTo - writtenUpTo;
        writtenUpTo = upTo;
      }
    }
    // A read refreshes the entry's lifetime.
    if (readEnd >= 0) this.entries.set(hashes[readEnd]!, Math.max(this.entries.get(hashes[readEnd]!) ?? 0, now + 300_000));
    return {
      input_tokens: total - read - written5m - written1h,
      cache_read_input_tokens: read,
      cache_creation_input_tokens: written5m + written1h,
      cache_creation: { ephemeral_5m_input_tokens: written5m, ephemeral_1h_input_tokens: written1h },
      total,
      breakpoints: breakpoints.length,
    };
  }
}
