import Table from 'cli-table3';

// The one table renderer: the CLI's listings and `kernelseek digest --print` alike.

const NO_BORDERS = {
  top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
  left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '  ',
};
const GAP = 2;
/** A text column is never squeezed below this: narrower, wrapped cells stop being readable. */
const MIN_TEXT_WIDTH = 12;

/**
 * A plain table (cli-table3, borders off): aligned columns, numbers right-aligned, and within
 * `width` when given, by wrapping the widest text columns (a summary, a reason) onto more lines.
 */
export function renderTable(headers: string[], rows: string[][], options: { width?: number } = {}): string {
  // Numbers with a unit or a currency (`24`, `1.31x`, `7.5 min`, `$0.50`, `<$0.01`), or a dash for none.
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => /^<?[-+]?\$?[\d.,]+( ?[a-zA-Z/%]+)?$|^[-—]$/.test(r[i] ?? '')));
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
