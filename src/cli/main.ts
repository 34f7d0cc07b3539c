import process from 'node:process';
import { readProcessEnv } from '../config/process-env.js';
import type { CliContext } from './context.js';
import { runCli } from './run-cli.js';

// The CLI entry point: the one place that exits the process. The environment is read by config/.
const controller = new AbortController();
let interrupts = 0;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(130); // a second Ctrl-C forces the way out
    controller.abort(new Error(`received ${sig}`));
  });
}

// `kernelseek ... | head` closes the pipe early: that ends the command, it is not an error to report.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const ctx: CliContext = {
  env: readProcessEnv(),
  cwd: process.cwd(),
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  interactive: Boolean(process.stdout.isTTY),
  signal: controller.signal,
  exitCode: 0,
};

const code = await runCli(process.argv.slice(2), ctx);
// Let pending writes drain, then end even if a library left a handle open.
process.exitCode = code;
setTimeout(() => process.exit(code), 50).unref();
