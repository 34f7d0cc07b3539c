import { PassThrough } from 'node:stream';
import type { Env } from '../../src/config/index.js';
import { runCli } from '../../src/cli/run-cli.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the kernelseek CLI in-process with its own environment and captured output. */
export async function runKernelseek(args: string[], env: Env, options: { cwd?: string; signal?: AbortSignal } = {}): Promise<CliResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => (out += String(d)));
  stderr.on('data', (d) => (err += String(d)));
  const code = await runCli(args, {
    env,
    stdin: new PassThrough(),
    cwd: options.cwd ?? process.cwd(),
    stdout,
    stderr,
    interactive: false,
    signal: options.signal ?? new AbortController().signal,
    exitCode: 0,
  });
  return { code, stdout: out, stderr: err };
}
