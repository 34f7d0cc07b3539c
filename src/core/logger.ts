import pino from 'pino';

export type Logger = pino.Logger;

/** Structured logs go to stderr, so stdout stays for the command's own output (tables, JSON). */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { ...bindings } }, pino.destination(2));
}

/** A logger that drops everything (tests, quiet commands). */
export const silentLogger: Logger = pino({ level: 'silent' });
