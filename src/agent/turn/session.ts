import type { Store } from '../../db/index.js';
import type { StoredMessage } from '../context/messages.js';

/** The run's conversation as stored, in order. */
export async function loadConversation(store: Store, runId: string): Promise<StoredMessage[]> {
  const rows = await store.transcript.messages(runId);
  return rows.map((r) => ({ seq: r.seq, role: r.role, content: r.content }));
}

/**
 * Appends the next message. The position is the conversation's length; a second writer for the
 * same position fails on the unique index, so two workers never both extend one conversation.
 */
export async function appendMessage(store: Store, runId: string, rows: StoredMessage[], role: 'user' | 'assistant', content: unknown[]): Promise<StoredMessage> {
  const seq = rows.length === 0 ? 0 : rows.at(-1)!.seq + 1;
  await store.transcript.appendMessage(runId, seq, role, content);
  const row = { seq, role, content };
  rows.push(row);
  return row;
}

type Block = { type: string; id?: string; text?: string; name?: string; input?: unknown; tool_use_id?: string };

export function toolUses(row: StoredMessage | undefined): { id: string; name: string; input: unknown }[] {
  if (!row || row.role !== 'assistant') return [];
  return (row.content as Block[]).filter((b) => b.type === 'tool_use').map((b) => ({ id: String(b.id), name: String(b.name), input: b.input }));
}

export function textOf(row: StoredMessage | undefined): string {
  if (!row) return '';
  return (row.content as Block[])
    .filter((b) => b.type === 'text')
    .map((b) => b.text ?? '')
    .join('\n');
}

/** The assistant row whose tool calls still wait for their results (the conversation's last row). */
export function pendingToolRow(rows: StoredMessage[]): StoredMessage | undefined {
  const last = rows.at(-1);
  return last && last.role === 'assistant' && toolUses(last).length > 0 ? last : undefined;
}
