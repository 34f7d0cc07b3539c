import type { Evaluation } from '../db/index.js';
import type { ChartRule, SeriesStyle, SpeedupPoint } from './charts.js';
import type { DigestFigures, DigestTask } from './figures.js';
import { countsForBest } from './summarize.js';

/** The label of a task's series: the architecture matters (a speedup on sm_90 is not one on sm_100). */
export function seriesName(task: Pick<DigestTask, 'task' | 'arch'>): string {
  return task.arch ? `${task.task} (${task.arch})` : task.task;
}

/**
 * The digest chart's series: per task with a counted candidate in the window, the best speedup so far
 * over time: from the window's start (at the previous best, or the baseline's 1.0) through each new
 * best, held to the window's end.
 */
export function digestChartPoints(figures: DigestFigures): SpeedupPoint[] {
  const from = new Date(figures.window.from);
  const to = new Date(figures.window.to);
  const points: SpeedupPoint[] = [];
  for (const task of figures.tasks) {
    if (!task.best) continue;
    const series = seriesName(task);
    let last = task.previousBest ?? 1;
    points.push({ series, x: from, speedup: last });
    for (const p of task.progress) {
      points.push({ series, x: new Date(p.at), speedup: p.speedup });
      last = p.speedup;
    }
    points.push({ series, x: to, speedup: last });
  }
  return points;
}

/** What a task's goal is measured against and how far (task.yaml `goal`). */
export type GoalOf = (task: string) => { vs: 'best_peer' | 'baseline'; speedup: number } | undefined;

/**
 * The digest chart's lines, the same as a run chart's: per task with a counted best in the window,
 * its strongest peer's speedup over the baseline (measured beside that best) and its goal.
 */
export function digestChartRules(figures: DigestFigures, goalOf?: GoalOf): ChartRule[] {
  const rules: ChartRule[] = [];
  for (const task of figures.tasks) {
    if (!task.best) continue;
    const series = seriesName(task);
    const { speedupVsBaseline, speedupVsPeer, peer } = task.best;
    const peerLine = speedupVsPeer != null && speedupVsPeer > 0 && peer ? { peer, speedup: speedupVsBaseline / speedupVsPeer } : undefined;
    if (peerLine) rules.push({ series: `${series} · ${peerLine.peer} (peer)`, kind: 'peer', y: peerLine.speedup });
    const goal = goalOf?.(task.task);
    if (goal) {
      const y = goal.vs === 'baseline' ? goal.speedup : peerLine ? goal.speedup * peerLine.speedup : undefined;
      if (y !== undefined) rules.push({ series: `${series} · goal ${goal.speedup.toFixed(2)}x vs ${goal.vs === 'baseline' ? 'baseline' : peerLine!.peer}`, kind: 'goal', y });
    }
  }
  return rules;
}

/** Series names of a run's chart. */
export const RUN_SERIES = { candidates: 'correct candidates', best: 'best so far' } as const;

/** Styles that go with runSpeedupPoints, for renderSpeedupChart's `styles` option. */
export const RUN_SERIES_STYLES: Record<string, SeriesStyle> = { [RUN_SERIES.candidates]: 'points', [RUN_SERIES.best]: 'step' };

/**
 * One run's chart over its evaluations (x = evaluation number): every counted candidate as a point,
 * and the best so far as a step line that starts at the baseline (1.0) before the first evaluation.
 * Failed, incorrect and quick-subset evaluations only advance the x axis.
 */
export function runSpeedupPoints(
  evaluations: Pick<Evaluation, 'seq' | 'status' | 'correct' | 'scenarios' | 'speedupVsBaseline'>[],
): SpeedupPoint[] {
  const ordered = evaluations.filter((e) => e.seq != null && e.status !== 'pending').sort((a, b) => a.seq! - b.seq!);
  const counted = ordered.filter(countsForBest);
  if (counted.length === 0) return [];
  const points: SpeedupPoint[] = [{ series: RUN_SERIES.best, x: 0, speedup: 1 }];
  let best = 1;
  let bestSeq = 0;
  for (const e of counted) {
    points.push({ series: RUN_SERIES.candidates, x: e.seq!, speedup: e.speedupVsBaseline! });
    if (e.speedupVsBaseline! > best) {
      best = e.speedupVsBaseline!;
      bestSeq = e.seq!;
      points.push({ series: RUN_SERIES.best, x: bestSeq, speedup: best });
    }
  }
  // Hold the best to the last evaluation, so the line shows how long it has stood.
  const lastSeq = ordered[ordered.length - 1]!.seq!;
  if (lastSeq > bestSeq) points.push({ series: RUN_SERIES.best, x: lastSeq, speedup: best });
  return points;
}
