import { CommanderError } from 'commander';
import { AppError, ConfigError, describeError } from '../core/errors.js';
import type { CliContext } from './context.js';
import { writeLine } from './write-line.js';
import { createProgram } from './program.js';

/**
 * Runs one command line and returns the exit status. It never exits the process itself, so tests
 * drive the CLI in-process exactly as a person does.
 */
export async function runCli(argv: string[], ctx: CliContext): Promise<number> {
  try {
    const program = await createProgram(ctx, argv);
    await program.parseAsync(argv, { from: 'user' });
    return ctx.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here with code 0; usage errors were already printed by commander.
      return error.exitCode === 0 ? 0 : 2;
    }
    if (error instanceof ConfigError) {
      writeLine(ctx.stderr, error.message);
      writeLine(ctx.stderr, 'Fix the variables above (see the configuration table in README.md) and try again.');
      return 78; // EX_CONFIG
    }
    if (error instanceof AppError) {
      writeLine(ctx.stderr, `error: ${error.userMessage}`);
      return 1;
    }
    writeLine(ctx.stderr, `error: ${describeError(error)}`);
    if (error instanceof Error && error.stack) writeLine(ctx.stderr, error.stack);
    return 1;
  }
}
