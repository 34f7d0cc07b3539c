import type { DigestFigures, DigestTask } from './figures.js';

/** Number and label formatting shared by the Slack and terminal renderings. */

export function formatSpeedup(v: number | null | undefined): string {
  return v == null || !Number.isFinite(v) ? '-' : `${v.toFixed(2)}x`;
}

export function formatUsd(v: number): string {
  if (v > 0 && v < 0.01) return '<$0.01';
  return `$${v.toFixed(2)}`;
}

/** 42 s, 7.5 min, 3.2 h: one decimal is as precise as a daily summary needs. */
export function formatSeconds(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${(seconds / 60).toFixed(1)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The window in words, in the digest's zone: "24 h to Sat 14 Mar, 09:00 UTC". */
export function describeWindow(window: DigestFigures['window'], timeZone: string): string {
  const from = new Date(window.from);
  const to = new Date(window.to);
  const hours = (to.getTime() - from.getTime()) / 3600_000;
  const span = hours % 24 === 0 && hours >= 48 ? `${hours / 24} days` : `${Number.isInteger(hours) ? hours : hours.toFixed(1)} h`;
  const end = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  }).format(to);
  return `${span} to ${end}`;
}

export function taskLabel(t: Pick<DigestTask, 'task' | 'arch'>): string {
  return t.arch ? `${t.task} (${t.arch})` : t.task;
}

/** "1.50x the baseline, 0.88x torch_compile" for a task's best of the window. */
export function describeBest(t: DigestTask): string {
  if (!t.best) return t.evaluations > 0 ? 'no correct candidate' : 'model calls, no evaluation';
  const peer = t.best.speedupVsPeer == null ? '' : `, ${formatSpeedup(t.best.speedupVsPeer)} ${t.best.peer ?? 'best peer'}`;
  return `${formatSpeedup(t.best.speedupVsBaseline)} baseline${peer}`;
}

/** "up from 1.25x", "new", or "best so far 1.60x" when the window did not beat the earlier best. */
export function describeChange(t: DigestTask): string {
  if (!t.best) return '';
  if (t.previousBest == null) return 'first result';
  if (t.best.speedupVsBaseline > t.previousBest) return `up from ${formatSpeedup(t.previousBest)}`;
  return `earlier best ${formatSpeedup(t.previousBest)}`;
}

/** Who asked: a Slack user id becomes a mention in Slack; anything else is shown as written. */
export function isSlackUserId(s: string): boolean {
  return /^[UW][A-Z0-9]{2,}$/.test(s);
}

/** Cuts text to `max` characters on a word boundary when it can, marking the cut. */
export function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > max * 0.6 ? cut.slice(0, space) : cut}…`;
}

/** "5 correct, 1 on the quick set, 1 compile error, 1 incorrect": what became of the evaluations. */
export function describeEvaluationMix(e: DigestFigures['evaluations']): string {
  const parts = [`${e.correct} correct`];
  if (e.quick > 0) parts.push(`${e.quick} on the quick set`);
  const failures = Object.entries(e.byStatus)
    .filter(([status]) => status !== 'ok')
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, n]) => `${n} ${status.replace(/_/g, ' ')}`);
  return [...parts, ...failures].join(', ');
}
