import pino from 'pino';
import pretty from 'pino-pretty';

export type Logger = pino.Logger;

export interface LoggerOptions {
  /**
   * Readable lines (pino-pretty) instead of JSON. Default: when stderr is a terminal, so a person
   * reads `INFO (run): ...` while a log collector, CI or a pipe still gets one JSON object a line.
   */
  pretty?: boolean;
}

/** Structured logs go to stderr, so stdout stays for the command's own output (tables, JSON). */
export function createLogger(level: string, bindings: Record<string, unknown> = {}, options: LoggerOptions = {}): Logger {
  const readable = options.pretty ?? Boolean(process.stderr.isTTY);
  // pino-pretty as a stream in this thread (not a transport's worker), so nothing is lost at exit.
  const destination = readable ? pretty({ destination: 2, sync: true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss' }) : pino.destination(2);
  return pino({ level, base: { ...bindings } }, destination);
}

/** A logger that drops everything (tests, quiet commands). */
export const silentLogger: Logger = pino({ level: 'silent' });
