/** One problem a task check found: where (file, line, field), what, and how to fix it. Shared by the
 * check's TypeScript side (task-check.ts), its Python parse (python-probe.ts) and the harness's own
 * `check-task --json` (harness-check.ts). */
export interface CheckProblem {
  severity: 'error' | 'warning';
  file: string;
  line?: number;
  field?: string;
  message: string;
  fix: string;
}
