import type { Writable } from 'node:stream';

/** One line of output. Its own module so the CLI's entry path stays free of the config schemas. */
export function writeLine(stream: Writable, text = ''): void {
  stream.write(`${text}\n`);
}
