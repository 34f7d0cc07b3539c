import type { EvaluationProgress } from './evaluation.js';

export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(h > 0 ? 2 : 1, '0');
  return `${h > 0 ? `${h}:` : ''}${mm}:${String(s % 60).padStart(2, '0')}`;
}

/** Where an evaluation stands: the stage (`compiling`, `correctness 2/11`, `timing 3/11`), ETA of that stage. */
export interface EvaluationStage {
  /** `compiling`, `correctness`, `timing`, `done`, or another phase the harness names. */
  name: string;
  /** The scenario being worked on (1-based) and how many the stage has, when per scenario. */
  at?: number;
  of?: number;
  /** Seconds left in this stage at the pace so far; undefined until a scenario of it finished. */
  etaSeconds?: number;
  /** `compiling`, `checking correctness 2/11`, `timing 3/11, ETA 0:20`. */
  text: string;
}

/**
 * The one status line of an evaluation on a terminal: elapsed time, the stage it is in (compiling,
 * correctness n/N, timing n/N) with an ETA from that stage's pace so far, and the last event. Its
 * `line()` without an event redraws the same state at a later time, so a ticker keeps it moving
 * while the harness is quiet (a long compile, one long scenario). Written by hand over a
 * progress-bar library: a bar library draws bars, hides the cursor and owns the stream, where this
 * needs one line that `\r` rewrites, and the figures are the point.
 */
export function createProgressTracker(now: () => number = () => Date.now()): { line(p?: EvaluationProgress): string; stage(): EvaluationStage } {
  const started = now();
  let name = 'compiling';
  let at: number | undefined;
  let of: number | undefined;
  let stageStarted = started;
  let last = '';
  let done = 0;
  let total: number | undefined;

  const stage = (): EvaluationStage => {
    const t = now();
    let etaSeconds: number | undefined;
    if (at !== undefined && of !== undefined && at > 1 && at <= of) etaSeconds = (((t - stageStarted) / (at - 1)) * (of - at + 1)) / 1000;
    const count = at !== undefined && of !== undefined ? ` ${Math.min(at, of)}/${of}` : '';
    const label = name === 'correctness' ? `checking correctness${count}` : `${name}${count}`;
    return { name, ...(at !== undefined ? { at } : {}), ...(of !== undefined ? { of } : {}), ...(etaSeconds !== undefined ? { etaSeconds } : {}), text: `${label}${etaSeconds !== undefined ? `, ETA ${clock(etaSeconds)}` : ''}` };
  };

  return {
    stage,
    line(p) {
      if (p) {
        if (p.message) last = p.message;
        if (p.n !== undefined) total = p.n;
        if (p.phase === 'compile') {
          name = p.status === 'compile_error' ? 'compile failed' : 'compiled';
          at = of = undefined;
        } else if (p.phase === 'scenario') {
          done += 1;
        } else if (p.phase === 'done') {
          name = 'done';
          at = of = undefined;
        } else if (p.phase !== 'queued' && p.phase !== 'refused') {
          // A per-scenario stage (correctness, timing): `i` counts from 0 within it.
          if (p.phase !== name) stageStarted = now();
          name = p.phase;
          at = p.i !== undefined ? p.i + 1 : undefined;
          of = p.n;
        } else {
          name = p.phase;
        }
      }
      const parts = [`${clock((now() - started) / 1000)} elapsed`, stage().text];
      if (done > 0 && total !== undefined) parts.push(`${done}/${total} scenarios done`);
      return `${parts.join(', ')}${last ? ` — ${last}` : ''}`;
    },
  };
}
