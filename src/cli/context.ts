import type { Readable, Writable } from 'node:stream';
import { loadConfig, type Config, type Env } from '../config/index.js';
import { createLogger, type Logger } from '../core/logger.js';

/** What every command gets: the environment it was started with and where to write. */
export interface CliContext {
  env: Env;
  cwd: string;
  /** Where questions typed at decision points come from (`kernelseek run`). */
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  /** True when stdout is a terminal (progress displays, colours). */
  interactive: boolean;
  /** Aborted on SIGINT/SIGTERM; long-running commands stop cleanly when it fires. */
  signal: AbortSignal;
  /** The status the process ends with; commands set it, only the entry point exits. */
  exitCode: number;
}

export function configOf(ctx: CliContext): Config {
  return loadConfig(ctx.env, { cwd: ctx.cwd });
}

export function loggerOf(config: Config, name: string): Logger {
  return createLogger(config.core.logLevel, { name });
}

export { writeLine } from './write-line.js';
