import type { Evaluation, Store } from '../db/index.js';
import type { TopLevelSpec } from 'vega-lite';
import { RUN_SERIES, RUN_SERIES_STYLES, runSpeedupPoints, type GoalOf } from './chart-data.js';
import { buildSpeedupChartSpec, renderSpeedupChart, type ChartInterval, type ChartRule, type SpeedupChartOptions, type SpeedupPoint } from './charts.js';
import { countsForBest } from './summarize.js';

/**
 * One run's chart, the one people read to answer "where is it, and where is it going": speedup over
 * the baseline for each counted candidate with its 95 % interval, the best so far as a step line,
 * and horizontal lines for the baseline, each peer and the goal (`kernelseek chart <run>`,
 * `/kernelseek chart <run>`, the final summary).
 */

export type RunChartEvaluation = Pick<Evaluation, 'seq' | 'status' | 'correct' | 'scenarios' | 'speedupVsBaseline' | 'result'>;

export interface RunChartInput {
  runId: string;
  task: string;
  /** The run's goal, as a speedup over `goalVs`. */
  target: number;
  /** What the goal is measured against (task.yaml `goal.vs`); unknown (the task is gone): no goal line. */
  goalVs: 'best_peer' | 'baseline' | undefined;
  evaluations: RunChartEvaluation[];
}

export interface RunChartData {
  points: SpeedupPoint[];
  intervals: ChartInterval[];
  rules: ChartRule[];
}

export const RUN_LINE_NAMES = { baseline: 'baseline (1.00x)' } as const;

function fmt(x: number): string {
  return `${x >= 10 ? x.toFixed(1) : x.toFixed(2)}x`;
}

interface ResultSummary {
  speedup_vs_baseline_geomean?: number | null;
  speedup_vs_peer_geomean?: Record<string, number | null>;
  speedup_vs_baseline_ci?: [number, number] | null;
}

function summaryOf(e: Pick<Evaluation, 'result'>): ResultSummary {
  return ((e.result as { summary?: ResultSummary } | null)?.summary ?? {}) as ResultSummary;
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * Each peer's speedup over the baseline, as measured beside `e`: the candidate's geomean over the
 * baseline divided by its geomean over the peer (same scenarios, so the candidate cancels out).
 */
export function peerSpeedups(e: Pick<Evaluation, 'result'>): { peer: string; speedup: number }[] {
  const s = summaryOf(e);
  const vsBaseline = s.speedup_vs_baseline_geomean;
  if (!finite(vsBaseline)) return [];
  return Object.entries(s.speedup_vs_peer_geomean ?? {})
    .filter((entry): entry is [string, number] => finite(entry[1]) && entry[1] > 0)
    .map(([peer, vsPeer]) => ({ peer, speedup: vsBaseline / vsPeer }))
    .sort((a, b) => b.speedup - a.speedup || a.peer.localeCompare(b.peer));
}

/** The goal as a speedup over the baseline, with its label, or null when it cannot be placed. */
export function goalLine(target: number, goalVs: RunChartInput['goalVs'], peers: { peer: string; speedup: number }[]): ChartRule | null {
  if (!goalVs) return null;
  if (goalVs === 'baseline') return { series: `goal ${fmt(target)} vs baseline`, kind: 'goal', y: target };
  const strongest = peers[0];
  return strongest ? { series: `goal ${fmt(target)} vs ${strongest.peer}`, kind: 'goal', y: target * strongest.speedup } : null;
}

/** What a run's chart plots: every value in it comes from here (the golden tests check these). */
export function runChartData(input: RunChartInput): RunChartData {
  const points = runSpeedupPoints(input.evaluations);
  const counted = input.evaluations.filter((e) => e.seq != null && countsForBest(e));
  const intervals: ChartInterval[] = [];
  for (const e of counted) {
    const ci = summaryOf(e).speedup_vs_baseline_ci;
    if (Array.isArray(ci) && finite(ci[0]) && finite(ci[1])) intervals.push({ series: RUN_SERIES.candidates, x: e.seq!, lo: ci[0], hi: ci[1] });
  }
  // The peers as measured beside the best candidate (the latest evaluation when nothing counted).
  const best = [...counted].sort((a, b) => b.speedupVsBaseline! - a.speedupVsBaseline! || a.seq! - b.seq!)[0];
  const reference = best ?? [...input.evaluations].reverse().find((e) => peerSpeedups(e).length > 0);
  const peers = reference ? peerSpeedups(reference) : [];
  const rules: ChartRule[] = [{ series: RUN_LINE_NAMES.baseline, kind: 'baseline', y: 1 }, ...peers.map((p) => ({ series: `${p.peer} (peer)`, kind: 'peer' as const, y: p.speedup }))];
  const goal = goalLine(input.target, input.goalVs, peers);
  if (goal) rules.push(goal);
  return { points, intervals, rules };
}

function chartOptions(input: Pick<RunChartInput, 'runId' | 'task'>, data: RunChartData, extra: Partial<SpeedupChartOptions>): SpeedupChartOptions {
  return {
    x: 'evaluation',
    title: `${input.runId} · ${input.task}: speedup vs baseline`,
    styles: RUN_SERIES_STYLES,
    reference: null,
    rules: data.rules,
    intervals: data.intervals,
    emptyText: 'No correct candidate yet',
    ...extra,
  };
}

export function buildRunChartSpec(input: RunChartInput, extra: Partial<SpeedupChartOptions> = {}): TopLevelSpec {
  const data = runChartData(input);
  return buildSpeedupChartSpec(data.points, chartOptions(input, data, extra));
}

/** The run's chart as a PNG (opaque, neutral ground: readable in light and dark themes). */
export async function renderRunChart(input: RunChartInput, extra: Partial<SpeedupChartOptions> = {}): Promise<Buffer> {
  const data = runChartData(input);
  return renderSpeedupChart(data.points, chartOptions(input, data, extra));
}

/** A sentence describing the chart (alt text, the CLI's line). */
export function describeRunChart(input: RunChartInput): string {
  const data = runChartData(input);
  const counted = data.points.filter((p) => p.series === RUN_SERIES.candidates).length;
  const best = data.points.filter((p) => p.series === RUN_SERIES.best).at(-1);
  const lines = data.rules.filter((r) => r.kind !== 'baseline').map((r) => `${r.series} at ${fmt(r.y)}`);
  return `${input.runId}: ${counted} counted candidate(s)${best && counted ? `, best ${fmt(best.speedup)} vs baseline` : ''}${lines.length ? `; ${lines.join(', ')}` : ''}.`;
}

/** A stored run's chart input (undefined: no such run). The goal's reference comes from the task. */
export async function loadRunChartInput(store: Pick<Store, 'runs' | 'evaluations'>, runId: string, goalOf?: GoalOf): Promise<RunChartInput | undefined> {
  const run = await store.runs.get(runId);
  if (!run) return undefined;
  const evaluations = await store.evaluations.forRun(run.id);
  return { runId: run.id, task: run.task, target: run.target, goalVs: goalOf?.(run.task)?.vs, evaluations };
}
