import type { CliContext } from './context.js';
import { reportError } from './error-output.js';
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
    return reportError(error, ctx.env, ctx.stderr);
  }
}
