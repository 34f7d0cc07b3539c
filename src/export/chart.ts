import type { TopLevelSpec } from 'vega-lite';
import { renderVegaLitePng } from '../digest/charts.js';
import type { Evidence } from './evidence-types.js';

/**
 * The evidence's chart: per scenario, the candidate's speedup over the baseline (the harness's
 * paired figure, with its 95 % interval), each peer's speedup over the same baseline (its time
 * against the baseline's), the goal, and the baseline itself at 1.0. Drawn with the digest's
 * Vega-Lite → SVG → PNG pipeline.
 */
export interface ChartRow {
  scenario: string;
  /** `candidate`, a peer's name, or `goal (...)`. */
  series: string;
  kind: 'candidate' | 'peer' | 'goal';
  speedup: number;
  lo: number | null;
  hi: number | null;
}

const positive = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;

/** What the chart plots, row by row (tests check these, not pixels). */
export function scenarioChartRows(e: Evidence): ChartRow[] {
  const rows: ChartRow[] = [];
  const goal = e.task.goal ?? (e.summary.goal ? { vs: e.summary.goal.vs, speedup: e.summary.goal.target } : null);
  const goalSeries = goal ? `goal (${goal.speedup}x ${goal.vs === 'best_peer' ? 'the fastest peer' : 'the baseline'})` : '';
  for (const s of e.scenarios) {
    const value = s.vs_baseline.value;
    if (positive(value)) rows.push({ scenario: s.id, series: 'candidate', kind: 'candidate', speedup: value, lo: s.vs_baseline.ci?.[0] ?? null, hi: s.vs_baseline.ci?.[1] ?? null });
    const peerSpeedups: number[] = [];
    for (const [name, t] of Object.entries(s.peer_ms)) {
      if (!positive(t) || !positive(s.baseline_ms)) continue;
      const speedup = s.baseline_ms / t;
      peerSpeedups.push(speedup);
      rows.push({ scenario: s.id, series: name, kind: 'peer', speedup, lo: null, hi: null });
    }
    if (goal) {
      const reference = goal.vs === 'best_peer' ? (peerSpeedups.length ? Math.max(...peerSpeedups) : null) : 1;
      if (reference !== null) rows.push({ scenario: s.id, series: goalSeries, kind: 'goal', speedup: goal.speedup * reference, lo: null, hi: null });
    }
  }
  return rows;
}

const PALETTE = ['#4c78a8', '#f58518', '#54a24b', '#b279a2', '#72b7b2', '#eeca3b', '#9d755d'];
const FONT = 'DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif';

/** The Vega-Lite specification of the chart. */
export function buildScenarioChartSpec(e: Evidence): TopLevelSpec {
  const rows = scenarioChartRows(e);
  const order = e.scenarios.map((s) => s.id);
  const series = [...new Set(rows.map((r) => r.series))];
  const colors = series.map((name, i) => (name.startsWith('goal') ? '#e45756' : PALETTE[i % PALETTE.length]!));
  const x = { field: 'scenario', type: 'nominal', sort: order, title: null, axis: { labelAngle: -60, labelLimit: 160, labelOverlap: false } };
  const y = { field: 'speedup', type: 'quantitative', scale: { type: 'log' }, title: 'speedup vs baseline (x, log scale)' };
  const color = { field: 'series', type: 'nominal', title: null, scale: { domain: series, range: colors } };
  const width = Math.min(3600, Math.max(720, order.length * 18));
  const subset = e.scenario_set.full ? '' : ` — ${e.scenario_set.evaluated} of ${e.scenario_set.total ?? '?'} scenarios, NOT VERIFIED`;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: `${e.task.name}: speedup per scenario (${e.run.id}, eval #${e.evaluation.seq ?? '?'})${subset}`, anchor: 'start', fontSize: 14 },
    width,
    height: 360,
    padding: 12,
    background: 'white',
    config: { font: FONT, view: { stroke: null }, axis: { labelFontSize: 10, titleFontSize: 12, gridColor: '#e6e6e6' }, legend: { orient: 'bottom', labelFontSize: 11, labelLimit: 360 } },
    layer: [
      { data: { values: [{ y: 1 }] }, mark: { type: 'rule', strokeDash: [4, 4], color: '#999' }, encoding: { y: { field: 'y', type: 'quantitative' } } },
      { data: { values: rows.filter((r) => r.kind === 'goal') }, mark: { type: 'line', strokeDash: [6, 3], strokeWidth: 2, interpolate: 'step' }, encoding: { x, y, color } },
      { data: { values: rows.filter((r) => r.kind === 'peer') }, mark: { type: 'line', strokeWidth: 1.5, point: { filled: true, size: 25 } }, encoding: { x, y, color } },
      { data: { values: rows.filter((r) => r.kind === 'candidate' && r.lo !== null && r.hi !== null) }, mark: { type: 'rule', strokeWidth: 2, color: PALETTE[0] }, encoding: { x, y: { ...y, field: 'lo' }, y2: { field: 'hi' } } },
      { data: { values: rows.filter((r) => r.kind === 'candidate') }, mark: { type: 'point', filled: true, size: 70 }, encoding: { x, y, color } },
    ],
  } as TopLevelSpec;
}

/** The chart as a PNG. */
export async function renderScenarioChart(e: Evidence): Promise<Buffer> {
  return renderVegaLitePng(buildScenarioChartSpec(e), { scale: 2 });
}
