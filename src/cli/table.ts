import type { Writable } from 'node:stream';
import { renderTable } from '../core/text-table.js';

/** The width to fit: the terminal's columns when `out` is one, else none (a pipe or a file gets whole lines). */
export function terminalWidth(out: Writable): number | undefined {
  const tty = out as Writable & { isTTY?: boolean; columns?: number };
  return tty.isTTY && tty.columns ? tty.columns : undefined;
}

// Here as well as in core/: the commands take their table helpers from one place.
export { renderTable };

/** A listing command's output: with `--json` the rows themselves, else a table of the cells each row gives. */
export function writeRows<R>(out: Writable, json: boolean | undefined, rows: R[], headers: string[], cells: (row: R) => string[]): void {
  out.write(`${json ? JSON.stringify(rows, null, 2) : renderTable(headers, rows.map(cells), { width: terminalWidth(out) })}\n`);
}
