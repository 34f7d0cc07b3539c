import { execa } from 'execa';
import type { CheckProblem } from './check-problem.js';
import { z } from 'zod';

/**
 * The harness's own check of a task folder, `python3 -m harness check-task --task-dir D --json`: it
 * imports reference.py and calls it (make_inputs, output_shapes, the reference on a scenario), which
 * only Python can. Its problems are added to ours; a harness without `--json` (an older checkout)
 * or without torch is a note, not a failure: the YAML-level checks never depend on it.
 */

export interface HarnessCheckOptions {
  python: string;
  repoRoot: string;
  env: Record<string, string>;
  timeoutMs?: number;
}

const ProblemSchema = z.object({
  file: z.string().default('task.yaml'),
  line: z.number().int().positive().nullish(),
  field: z.string().nullish(),
  message: z.string(),
  fix: z.string().nullish(),
  severity: z.enum(['error', 'warning']).nullish(),
  level: z.enum(['error', 'warning']).nullish(),
});
/** harness/check_task.py: problems as objects, warnings as lines (`field: message`). */
const OutputSchema = z.object({ problems: z.array(ProblemSchema), warnings: z.array(z.union([z.string(), ProblemSchema])).default([]) }).loose();

export type HarnessCheckProblem = CheckProblem;

export async function runHarnessCheck(taskDir: string, options: HarnessCheckOptions): Promise<{ problems: HarnessCheckProblem[]; note?: string }> {
  const r = await execa(options.python, ['-m', 'harness', 'check-task', '--task-dir', taskDir, '--json'], {
    cwd: options.repoRoot,
    env: { ...options.env, PYTHONDONTWRITEBYTECODE: '1' },
    extendEnv: false,
    reject: false,
    timeout: options.timeoutMs ?? 120_000,
  });
  const stderr = String(r.stderr ?? '');
  if (r.failed && r.exitCode === undefined) return { problems: [], note: `the harness's check did not run (${options.python}: ${r.shortMessage})` };
  if (r.exitCode === 2 && /unrecognized arguments: --json/.test(stderr)) {
    return { problems: [], note: "this checkout's harness has no `check-task --json`: what only the harness finds (running reference.py) was not checked; `python3 -m harness check-task --task-dir <task>` reports its first problem" };
  }
  let parsed: z.infer<typeof OutputSchema> | undefined;
  try {
    const result = OutputSchema.safeParse(JSON.parse(String(r.stdout)));
    parsed = result.success ? result.data : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed) {
    const last = stderr.trim().split('\n').pop() ?? '';
    return { problems: [], note: `the harness's check-task --json gave no problem list (exit ${r.exitCode ?? r.signal}${last ? `: ${last}` : ''})` };
  }
  const item = (p: z.infer<typeof ProblemSchema>, severity: 'error' | 'warning'): HarnessCheckProblem => ({
    severity: p.severity ?? p.level ?? severity,
    file: p.file,
    ...(p.line ? { line: p.line } : {}),
    ...(p.field ? { field: p.field } : {}),
    message: p.message,
    fix: p.fix ?? 'see docs/tasks.md',
  });
  const warning = (w: string | z.infer<typeof ProblemSchema>): HarnessCheckProblem => {
    if (typeof w !== 'string') return item(w, 'warning');
    const m = /^([A-Za-z_][\w.[\]]*): (.*)$/s.exec(w);
    return { severity: 'warning', file: 'task.yaml', ...(m ? { field: m[1]!, message: m[2]! } : { message: w }), fix: 'see docs/tasks.md' };
  };
  return { problems: [...parsed.problems.map((p) => item(p, 'error')), ...parsed.warnings.map(warning)] };
}
