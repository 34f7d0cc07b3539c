import type { Writable } from 'node:stream';
import type { Config } from '../../config/index.js';
import { UserInputError } from '../../core/errors.js';
import type { Store } from '../../db/index.js';
import { configuredSecrets, redactValue } from './redact.js';

export interface TraceOptions {
  config: Config;
  store: Store;
  runId: string;
  out: Writable;
}

/** Writes a line and waits when the stream asks for it (a long trace never sits in memory twice). */
async function writeLine(out: Writable, record: unknown): Promise<void> {
  if (!out.write(`${JSON.stringify(record)}\n`)) await new Promise<void>((resolve) => out.once('drain', resolve));
}

/**
 * Exports a run's whole trace as JSON lines, in this order: the run, its messages, model steps, tool
 * calls, evaluations and questions, each line `{ "type": ..., ... }`. Secrets are redacted: the
 * configured credentials wherever they appear, secret-named fields, and secret-shaped strings
 * (API keys, tokens, Authorization headers, passwords in URLs).
 */
export async function exportTrace(options: TraceOptions): Promise<{ lines: number }> {
  const { store, runId, out } = options;
  const run = await store.runs.get(runId);
  if (!run) throw new UserInputError(`There is no run '${runId}'.`, { code: 'run_unknown' });
  const secrets = configuredSecrets(options.config);
  let lines = 0;
  const emit = async (type: string, row: object) => {
    await writeLine(out, redactValue({ type, ...row }, secrets));
    lines++;
  };
  await emit('run', { schema: 'kernelseek.trace/1', ...run });
  for (const m of await store.transcript.messages(runId)) await emit('message', m);
  for (const s of await store.transcript.steps(runId)) await emit('step', s);
  for (const c of await store.transcript.toolCalls(runId)) await emit('tool_call', c);
  for (const e of await store.evaluations.forRun(runId)) await emit('evaluation', e);
  for (const q of await store.questions.forRun(runId)) await emit('question', q);
  return { lines };
}
