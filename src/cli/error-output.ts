import type { Writable } from 'node:stream';
import { CommanderError } from 'commander';
import { AppError, ConfigError, describeError } from '../core/errors.js';
import type { Env } from '../config/process-env.js';
import { writeLine } from './write-line.js';

const SYSTEM_REASONS: Record<string, string> = {
  ENOENT: 'it does not exist',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EISDIR: 'it is a folder where a file was expected',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the filesystem is read-only',
  ENOSPC: 'the disk is full',
  EEXIST: 'it already exists',
  ECONNREFUSED: 'connection refused (is the service running?)',
  ENOTFOUND: 'host not found',
  ETIMEDOUT: 'timed out',
};

/** A failure of the operating system on a path or an address, said in one line that names it. */
function systemError(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const e = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if (!e.code || !SYSTEM_REASONS[e.code]) return undefined;
  const reason = SYSTEM_REASONS[e.code];
  if (e.path) return `cannot ${e.syscall ?? 'use'} ${e.path}: ${reason} (${e.code}). Check the path, or the variable or option that gave it.`;
  if (e.address) return `cannot reach ${e.address}${e.port ? `:${e.port}` : ''}: ${reason} (${e.code}).`;
  return undefined;
}

/**
 * What a person sees when a command fails: one line naming what is wrong and how to fix it, and the
 * exit status. Stack traces are for developers: only with LOG_LEVEL=debug (or trace).
 */
export function reportError(error: unknown, env: Env, stderr: Writable): number {
  if (error instanceof CommanderError) {
    // --help and --version end here with code 0; usage errors were already printed by commander.
    return error.exitCode === 0 ? 0 : 2;
  }
  const debug = env.LOG_LEVEL === 'debug' || env.LOG_LEVEL === 'trace';
  let code = 1;
  if (error instanceof ConfigError) {
    writeLine(stderr, error.message);
    writeLine(stderr, error.fix ?? 'Fix the variables above (see the configuration table in README.md) and try again.');
    code = 78; // EX_CONFIG
  } else if (error instanceof AppError) {
    writeLine(stderr, `error: ${error.userMessage}`);
  } else {
    const known = systemError(error);
    writeLine(stderr, `error: ${known ?? describeError(error)}`);
    if (!known && !debug) writeLine(stderr, 'This was not expected: run again with LOG_LEVEL=debug to see where it happened, and report it.');
  }
  if (debug && error instanceof Error && error.stack) writeLine(stderr, error.stack);
  return code;
}
