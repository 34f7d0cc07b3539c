import type { EvalResult } from '../harness/result.js';

const MAX_LINES = 40;

/**
 * How `kernelseek eval` shows a kernel that does not compile: the compiler's own output (from the
 * result's compile.log, which exists only inside the result JSON), with the harness's copy of the
 * file (`kernel.cpp`, the task's file name) renamed to the file the person gave so an editor can
 * jump to the line, and one line for stderr that quotes the first error.
 */
export function compileFailure(result: EvalResult, given: { path: string; harnessName: string }): { output: string[]; error: string } | undefined {
  if (result.status !== 'compile_error') return undefined;
  const escaped = given.harnessName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const rename = new RegExp(`(^|[\\s'"(/])${escaped}(?=[:'")\\s]|$)`, 'g');
  const lines = result.compile.log.split('\n').map((l) => l.replace(rename, (_m, lead: string) => `${lead}${given.path}`));
  const compilerLines = lines.filter((l) => !l.startsWith('$ ') && l.trim() !== '');
  const first = compilerLines.find((l) => /\berror\b/i.test(l)) ?? compilerLines[0];
  const shown = lines.length > MAX_LINES ? [...lines.slice(0, MAX_LINES), `... ${lines.length - MAX_LINES} more line(s) in the result JSON (--json or --out), compile.log`] : lines;
  return {
    output: shown,
    error: first
      ? `${given.path} does not compile: ${first.trim()} — fix it and run kernelseek eval again.`
      : `${given.path} does not compile and the compiler printed nothing: try compiling it yourself with the flags the task gives (docs/tasks.md).`,
  };
}

/** The harness's notes, less the one that points at a compile.log no one can open (the output is shown instead). */
export function notesShown(result: EvalResult): string[] {
  return result.status === 'compile_error' ? result.messages.filter((m) => !/compile\.log/.test(m)) : result.messages;
}
