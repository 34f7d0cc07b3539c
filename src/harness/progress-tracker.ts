import type { EvaluationProgress } from './evaluation.js';

function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(h > 0 ? 2 : 1, '0');
  return `${h > 0 ? `${h}:` : ''}${mm}:${String(s % 60).padStart(2, '0')}`;
}

/**
 * The one status line of an evaluation on a terminal: elapsed time, scenarios done, and an ETA from
 * the pace of the scenarios finished so far (compilation excluded, it is not per scenario). Written
 * by hand over a progress-bar library: a bar library draws bars, hides the cursor and owns the
 * stream, where this needs one line that `\r` rewrites, and the figures are the point.
 */
export function createProgressTracker(now: () => number = () => Date.now()): { line(p: EvaluationProgress): string } {
  const started = now();
  let firstScenarioAt: number | undefined;
  let done = 0;
  let total: number | undefined;
  let last = '';
  return {
    line(p) {
      const t = now();
      if (p.n !== undefined) total = p.n;
      if (p.i !== undefined && firstScenarioAt === undefined) firstScenarioAt = t;
      if (p.phase === 'scenario' && p.status !== undefined) done = Math.max(done, (p.i ?? done) + 1);
      if (p.message) last = p.message;
      const parts = [`${clock((t - started) / 1000)} elapsed`];
      if (total !== undefined) parts.push(`${done}/${total} scenarios`);
      if (total !== undefined && done > 0 && done < total && firstScenarioAt !== undefined) {
        parts.push(`ETA ${clock((((t - firstScenarioAt) / done) * (total - done)) / 1000)}`);
      }
      return `${parts.join(', ')}${last ? ` — ${last}` : ''}`;
    },
  };
}
