import type { Evaluation, Question } from '../../db/index.js';
import { historyTable } from '../evaluation/summary.js';
import { estimateTokens, toApiMessages, type Compaction, type StoredMessage } from './messages.js';

/** Rows at the end of the conversation never compacted (the model's working memory). */
export const KEEP_RECENT_ROWS = 6;
/** After compacting, the request should use at most this share of the budget (room to grow). */
export const COMPACTION_TARGET = 0.6;

/**
 * The note that replaces what compaction removed: the best candidate's source, the evaluation
 * history table and every question asked so far, verbatim.
 */
export function buildCompactionNote(input: { evaluations: Evaluation[]; best: Evaluation | null; questions: Question[]; kernelFile: string }): string {
  const parts = ['[Context note: older tool outputs above were compacted to save context. What matters from them:]', '', 'Evaluation history:', historyTable(input.evaluations)];
  if (input.best) {
    parts.push(
      '',
      `Best correct candidate so far: evaluation #${input.best.seq} (${input.best.speedupVsBaseline?.toFixed(3) ?? '-'}x vs baseline${input.best.speedupVsBestPeer != null ? `, ${input.best.speedupVsBestPeer.toFixed(3)}x vs the strongest peer` : ''}); git tag \`best\` in the workspace. Its ${input.kernelFile}:`,
      '```',
      input.best.source,
      '```',
    );
  } else parts.push('', 'No correct candidate yet.');
  const delivered = input.questions.filter((q) => q.deliveredAt);
  if (delivered.length > 0) {
    parts.push('', 'Questions asked so far:');
    for (const q of delivered) parts.push(`- ${q.source === 'human' ? `from ${q.author}` : 'from the question bank'}: ${q.text}`);
  }
  return parts.join('\n');
}

/**
 * Chooses the compaction watermark: the smallest seq such that the request (with the note) fits in
 * COMPACTION_TARGET of the budget, never lower than the current watermark and never touching the
 * last KEEP_RECENT_ROWS rows. Returns the current compaction when the request already fits.
 */
export function planCompaction(input: {
  rows: StoredMessage[];
  current: Compaction | null;
  fixedTokens: number;
  budgetTokens: number;
  note: () => string;
  force?: boolean;
}): Compaction | null {
  const size = (c: Compaction | null) => input.fixedTokens + estimateTokens(toApiMessages(input.rows, c));
  if (!input.force && size(input.current) <= input.budgetTokens) return input.current;
  const note = input.note();
  const maxThrough = Math.max(1, (input.rows.at(-1)?.seq ?? 0) - KEEP_RECENT_ROWS + 1);
  const start = Math.max(1, input.current?.throughSeq ?? 1);
  const target = input.budgetTokens * COMPACTION_TARGET;
  let chosen = maxThrough;
  // Step over user rows: the note lands on the first user row at or after the watermark.
  for (let through = start; through <= maxThrough; through++) {
    const row = input.rows.find((r) => r.seq === through);
    if (row && row.role !== 'user') continue;
    if (size({ throughSeq: through, note }) <= target) {
      chosen = through;
      break;
    }
  }
  if (input.force && input.current && chosen <= input.current.throughSeq) chosen = Math.min(maxThrough, input.current.throughSeq + 2);
  return { throughSeq: Math.max(chosen, input.current?.throughSeq ?? 0), note };
}
