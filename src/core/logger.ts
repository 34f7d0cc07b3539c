import pino from 'pino';
import pretty from 'pino-pretty';
import { redactString, redactValue } from './redact.js';

export type Logger = pino.Logger;

export interface LoggerOptions {
  /**
   * Readable lines (pino-pretty) instead of JSON. Default: when stderr is a terminal, so a person
   * reads `INFO (run): ...` while a log collector, CI or a pipe still gets one JSON object a line.
   */
  pretty?: boolean;
}

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
export function createLogger(level: string, bindings: Record<string, unknown> = {}, options: LoggerOptions = {}): Logger {
  const readable = options.pretty ?? Boolean(process.stderr.isTTY);
  // pino-pretty as a stream in this thread (not a transport's worker), so nothing is lost at exit;
  // the redaction hook runs before either destination sees the line.
  const destination = readable ? pretty({ destination: 2, sync: true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss' }) : pino.destination(2);
  return pino({ level, base: { ...bindings }, hooks: { streamWrite: redactLogLine } }, destination);
}

/** A logger that drops everything (tests, quiet commands). */
export const silentLogger: Logger = pino({ level: 'silent' });
