import { describe, expect, it } from 'vitest';
import { renderTable } from '../../src/cli/table.js';

const HEADERS = ['task', 'device', 'scenarios', 'summary'];
const ROWS = [
  ['cpu_softmax', 'cpu', '11', 'Row-wise softmax of a float32 matrix on one CPU core (the harness demo and CI task).'],
  ['flash_attn_fwd', 'cuda', '200', 'Attention forward in bf16 with fp32 accumulation, BHSD layout, MHA/GQA/MQA, causal and non-causal.'],
];

describe('renderTable', () => {
  it('aligns columns, numbers to the right, with whole lines when no width is given (a pipe)', () => {
    const lines = renderTable(HEADERS, ROWS).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^task {12}device {2}scenarios {2}summary$/);
    // Right-aligned: the counts end in the same column as their header.
    expect(lines[1]!.indexOf('11') + 2).toBe(lines[0]!.indexOf('scenarios') + 'scenarios'.length);
    expect(lines[2]!.indexOf('200') + 3).toBe(lines[0]!.indexOf('scenarios') + 'scenarios'.length);
  });

  it('right-aligns amounts of money and "less than" amounts as numbers (the runs listing, the digest)', () => {
    const lines = renderTable(['run', 'cost'], [['ks-a', '$12.00'], ['ks-b', '<$0.01'], ['ks-c', '-']]).split('\n');
    expect(lines).toEqual(['run     cost', 'ks-a  $12.00', 'ks-b  <$0.01', 'ks-c       -']);
  });

  it('fits the terminal by wrapping the widest text column, keeping every word', () => {
    for (const width of [60, 80, 100]) {
      const text = renderTable(HEADERS, ROWS, { width });
      const lines = text.split('\n');
      expect(Math.max(...lines.map((l) => l.length)), `width ${width}`).toBeLessThanOrEqual(width);
      const words = (s: string) => s.split(/\s+/).filter(Boolean);
      expect(words(text).sort()).toEqual([...HEADERS, ...ROWS.flat()].flatMap(words).sort());
      // The short columns are not wrapped: each task name stays whole on its row's first line.
      expect(lines.filter((l) => /^(cpu_softmax|flash_attn_fwd) /.test(l))).toHaveLength(2);
    }
  });
});
