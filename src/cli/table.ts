import type { Writable } from 'node:stream';

/** A plain-text table with aligned columns; numbers right-aligned. */
export function renderTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => /^[-+]?[\d.,]+[x%]?$|^-$/.test(r[i] ?? '')));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** A listing command's output: with `--json` the rows themselves, else a table of the cells each row gives. */
export function writeRows<R>(out: Writable, json: boolean | undefined, rows: R[], headers: string[], cells: (row: R) => string[]): void {
  out.write(`${json ? JSON.stringify(rows, null, 2) : renderTable(headers, rows.map(cells))}\n`);
}
