import type { ContentBlockParam, MessageParam } from '../model/types.js';

/** A stored conversation row (run_messages) as the engine reads it. */
export interface StoredMessage {
  seq: number;
  role: 'user' | 'assistant';
  content: unknown[];
}

export interface Compaction {
  /** Tool results (and long tool inputs) in rows with seq < throughSeq are sent compacted. */
  throughSeq: number;
  /** Restates the best candidate, the evaluation history and the questions asked. */
  note: string;
}

type Block = Record<string, unknown> & { type: string };

const LONG_INPUT_CHARS = 400;

// A compacted result keeps the start of its first line: enough to recall what it was. Every compacted
// result stays in the conversation, so this is what a long run's context grows by per step.
const EXCERPT_CHARS = 80;

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return line.length > EXCERPT_CHARS ? `${line.slice(0, EXCERPT_CHARS - 3)}...` : line;
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => (c as { text?: string }).text ?? '').join('\n');
  return '';
}

function compactBlock(block: Block): Block {
  if (block.type === 'tool_result') {
    const text = resultText(block.content);
    if (text.length <= 200) return block;
    return { ...block, content: `[compacted to save context; it began: ${firstLine(text)} — ${text.length} characters]` };
  }
  if (block.type === 'tool_use') {
    const input = { ...(block.input as Record<string, unknown>) };
    let changed = false;
    for (const [key, value] of Object.entries(input)) {
      if (typeof value === 'string' && value.length > LONG_INPUT_CHARS) {
        input[key] = `[compacted: ${value.length} characters]`;
        changed = true;
      }
    }
    return changed ? { ...block, input } : block;
  }
  return block;
}

/**
 * Turns stored rows into the request's messages: consecutive rows of one role are merged (a
 * question delivered after tool results joins their user message), rows before the compaction
 * watermark are compacted, and the compaction note is appended to the first user message at or
 * after the watermark. The result depends only on the rows and the compaction, so the prefix the
 * API caches stays byte-identical from one step to the next.
 */
export function toApiMessages(rows: StoredMessage[], compaction: Compaction | null): MessageParam[] {
  const out: { role: 'user' | 'assistant'; content: Block[] }[] = [];
  let noteInserted = compaction === null;
  for (const row of rows) {
    let blocks = (row.content as Block[]).map((b) => ({ ...b }));
    if (compaction && row.seq < compaction.throughSeq && row.seq > 0) blocks = blocks.map(compactBlock);
    if (!noteInserted && compaction && row.seq >= compaction.throughSeq && row.role === 'user') {
      blocks = [...blocks, { type: 'text', text: compaction.note }];
      noteInserted = true;
    }
    const last = out.at(-1);
    if (last && last.role === row.role) last.content.push(...blocks);
    else out.push({ role: row.role, content: blocks });
  }
  // The API wants tool results first in a user message.
  for (const m of out) {
    if (m.role === 'user') m.content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'));
  }
  return out as unknown as MessageParam[];
}

/** Removes our own bookkeeping and response-only fields, keeping what the API accepts back. */
export function toParamBlocks(content: unknown[]): ContentBlockParam[] {
  const out: ContentBlockParam[] = [];
  for (const raw of content as Block[]) {
    switch (raw.type) {
      case 'text':
        if (typeof raw.text === 'string' && raw.text !== '') out.push({ type: 'text', text: raw.text });
        break;
      case 'tool_use':
        out.push({ type: 'tool_use', id: String(raw.id), name: String(raw.name), input: (raw.input ?? {}) as Record<string, unknown> });
        break;
      case 'thinking':
        out.push({ type: 'thinking', thinking: String(raw.thinking ?? ''), signature: String(raw.signature ?? '') });
        break;
      case 'redacted_thinking':
        out.push({ type: 'redacted_thinking', data: String(raw.data ?? '') });
        break;
      default:
        // Server-tool blocks and future types: kept as they came.
        out.push(raw as unknown as ContentBlockParam);
    }
  }
  return out;
}

/** Estimated tokens of a request: ~3.5 characters per token (code and JSON tokenise densely). */
export function estimateTokens(value: unknown): number {
  return Math.ceil(JSON.stringify(value).length / 3.5);
}
