import { describe, expect, it } from 'vitest';
import { withCacheBreakpoints } from '../../src/agent/context/cache-control.js';
import { planCompaction } from '../../src/agent/context/compaction.js';
import { estimateTokens, toApiMessages, type StoredMessage } from '../../src/agent/context/messages.js';

function conversation(steps: number, outputChars: number): StoredMessage[] {
  const rows: StoredMessage[] = [{ seq: 0, role: 'user', content: [{ type: 'text', text: 'the task' }] }];
  for (let i = 0; i < steps; i++) {
    rows.push({ seq: rows.length, role: 'assistant', content: [{ type: 'text', text: `step ${i}` }, { type: 'tool_use', id: `t${i}`, name: 'bash', input: { command: `run ${i}` } }] });
    rows.push({ seq: rows.length, role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `output ${i}\n${'x'.repeat(outputChars)}` }] });
  }
  return rows;
}

describe('request messages', () => {
  it('merges consecutive rows of one role, tool results first', () => {
    const rows: StoredMessage[] = [
      { seq: 0, role: 'user', content: [{ type: 'text', text: 'task' }] },
      { seq: 1, role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'bash', input: {} }] },
      { seq: 2, role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'done' }] },
      { seq: 3, role: 'user', content: [{ type: 'text', text: 'Question from alice: why?' }] },
    ];
    const messages = toApiMessages(rows, null);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect((messages[2]!.content as { type: string }[]).map((b) => b.type)).toEqual(['tool_result', 'text']);
  });

  it('puts at most four cache breakpoints: tools, system, and the last two user messages', () => {
    const messages = toApiMessages(conversation(5, 10), null);
    const out = withCacheBreakpoints({ tools: [{ type: 'bash_20250124', name: 'bash' }, { name: 'evaluate', input_schema: { type: 'object' } }], system: 'sys', messages });
    const marks = JSON.stringify(out).split('"cache_control"').length - 1;
    expect(marks).toBe(4);
    expect(out.breakpoints).toBe(4);
    const last = out.messages.at(-1)!.content as { cache_control?: unknown }[];
    expect(last.at(-1)!.cache_control).toEqual({ type: 'ephemeral' });
    // The input is not mutated: the stored conversation stays free of cache marks.
    expect(JSON.stringify(messages)).not.toContain('cache_control');
  });
});

describe('compaction', () => {
  it('leaves a request that fits alone', () => {
    const rows = conversation(3, 100);
    expect(planCompaction({ rows, current: null, fixedTokens: 100, budgetTokens: 100_000, note: () => 'note' })).toBeNull();
  });

  it('compacts old tool results to fit, keeps recent rows and the task verbatim, and adds the note', () => {
    const rows = conversation(40, 4000);
    const budget = 30_000;
    expect(estimateTokens(toApiMessages(rows, null))).toBeGreaterThan(budget);
    const plan = planCompaction({ rows, current: null, fixedTokens: 1000, budgetTokens: budget, note: () => 'NOTE: history table and best source' })!;
    expect(plan).not.toBeNull();
    const messages = toApiMessages(rows, plan);
    expect(1000 + estimateTokens(messages)).toBeLessThanOrEqual(budget * 0.6);
    const json = JSON.stringify(messages);
    expect(json).toContain('the task');
    expect(json).toContain('NOTE: history table and best source');
    expect(json).toContain('compacted to save context; it began: output 0');
    // The most recent results are intact.
    expect(json).toContain(`output 39\\n${'x'.repeat(4000)}`);
    // Tool calls and results still pair up.
    const uses = messages.flatMap((m) => (m.content as { type: string; id?: string }[]).filter((b) => b.type === 'tool_use').map((b) => b.id));
    const results = messages.flatMap((m) => (m.content as { type: string; tool_use_id?: string }[]).filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id));
    expect(results).toEqual(uses);
  });

  it('never moves the watermark back and is stable between steps', () => {
    const rows = conversation(40, 4000);
    const first = planCompaction({ rows, current: null, fixedTokens: 0, budgetTokens: 30_000, note: () => 'n' })!;
    const again = planCompaction({ rows, current: first, fixedTokens: 0, budgetTokens: 30_000, note: () => 'n' });
    expect(again).toBe(first);
    const forced = planCompaction({ rows, current: first, fixedTokens: 0, budgetTokens: 30_000, note: () => 'n', force: true })!;
    expect(forced.throughSeq).toBeGreaterThan(first.throughSeq);
  });
});
