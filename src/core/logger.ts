import pino from 'pino';
import { redactString, redactValue } from './redact.js';

export type Logger = pino.Logger;

/**
 * Every line is redacted just before it is written, whatever put the secret there: a message, a
 * field, a child logger's bindings, an error's message or stack (a driver's error can name its
 * connection string, `redis://:password@host`). The line is parsed and redacted field by field, so
 * the JSON stays valid; a line that does not parse is redacted as text.
 */
export function redactLogLine(line: string): string {
  try {
    return `${JSON.stringify(redactValue(JSON.parse(line)))}\n`;
  } catch {
    return redactString(line);
  }
}

/** Structured logs go to stderr, so stdout stays for the command's own output (tables, JSON). */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { ...bindings }, hooks: { streamWrite: redactLogLine } }, pino.destination(2));
}

/** A logger that drops everything (tests, quiet commands). */
export const silentLogger: Logger = pino({ level: 'silent' });
