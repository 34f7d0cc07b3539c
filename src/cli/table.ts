import type { Writable } from 'node:stream';
import Table from 'cli-table3';

const NO_BORDERS = {
  top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
  left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '  ',
};
const GAP = 2;
/** A text column is never squeezed below this: narrower, wrapped cells stop being readable. */
const MIN_TEXT_WIDTH = 12;

/** The width to fit: the terminal's columns when `out` is one, else none (a pipe or a file gets whole lines). */
export function terminalWidth(out: Writable): number | undefined {
  const tty = out as Writable & { isTTY?: boolean; columns?: number };
  return tty.isTTY && tty.columns ? tty.columns : undefined;
}

/**
 * A plain table (cli-table3, borders off): aligned columns, numbers right-aligned, and within
 * `width` when given, by wrapping the widest text columns (a summary, a reason) onto more lines.
 */
export function renderTable(headers: string[], rows: string[][], options: { width?: number } = {}): string {
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => /^[-+]?[\d.,]+( ?[a-zA-Z/%]+)?$|^[-—]$/.test(r[i] ?? '')));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  if (options.width) {
    const total = () => widths.reduce((a, b) => a + b, 0) + GAP * (widths.length - 1);
    while (total() > options.width) {
      let widest = -1;
      widths.forEach((w, i) => {
        if (!numeric[i] && w > MIN_TEXT_WIDTH && (widest < 0 || w > widths[widest]!)) widest = i;
      });
      if (widest < 0) break; // nothing left to squeeze: the terminal wraps the rest
      widths[widest]! -= 1;
    }
  }
  const table = new Table({
    head: headers,
    chars: NO_BORDERS,
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true },
    colAligns: numeric.map((n) => (n ? 'right' : 'left')),
    colWidths: widths,
    wordWrap: true,
    wrapOnWordBoundary: true,
  });
  table.push(...rows.map((r) => headers.map((_, i) => r[i] ?? '')));
  return table
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n');
}

/** A listing command's output: with `--json` the rows themselves, else a table of the cells each row gives. */
export function writeRows<R>(out: Writable, json: boolean | undefined, rows: R[], headers: string[], cells: (row: R) => string[]): void {
  out.write(`${json ? JSON.stringify(rows, null, 2) : renderTable(headers, rows.map(cells), { width: terminalWidth(out) })}\n`);
}
