import { Resvg, type ResvgRenderOptions } from '@resvg/resvg-js';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { zoneOffsetMs } from './window.js';

/**
 * Speedup charts, rendered without a browser: Vega-Lite → Vega → SVG (Vega's headless renderer) →
 * PNG (resvg, native). Shared by the daily digest (per-task series over time) and the Slack run
 * summary (per-evaluation series of one run): see docs/digest.md.
 */

/** One point of a series. `x` is a time (Date) for `x: 'time'` charts, an evaluation number otherwise. */
export interface SpeedupPoint {
  series: string;
  x: Date | number;
  speedup: number;
}

/** How a series is drawn: a best-so-far step line, a plain line, or loose points (candidates). */
export type SeriesStyle = 'step' | 'line' | 'points';

export interface SpeedupChartOptions {
  x: 'time' | 'evaluation';
  title?: string;
  /** Size of the chart in CSS pixels; the PNG is `width·scale × height·scale` pixels. */
  width?: number;
  height?: number;
  /** Pixel density (2 = sharp on high-density screens). */
  scale?: number;
  /** The zone whose wall-clock times label a time axis. */
  timeZone?: string;
  /** A dashed horizontal rule, by default at 1.0 (the baseline); null for none. */
  reference?: number | null;
  /** Per series; a series not named here is a step line. */
  styles?: Record<string, SeriesStyle>;
  yTitle?: string;
  /** What the chart says when there are no points. */
  emptyText?: string;
  /**
   * Horizontal lines across the chart, each a series of its own in the legend: the baseline, a
   * peer's speedup over the baseline, the goal. Dashed by kind.
   */
  rules?: ChartRule[];
  /** Vertical bars of 95 % intervals (a candidate's speedup from lo to hi), in their series' colour. */
  intervals?: ChartInterval[];
  /** Extra font files or directories, for hosts without system fonts (see chartTextRenders). */
  fontFiles?: string[];
  fontDirs?: string[];
}

export const DEFAULT_CHART = { width: 800, height: 400, scale: 2 } as const;

/** A horizontal line: `y` is a speedup over the baseline. */
export interface ChartRule {
  series: string;
  kind: 'baseline' | 'peer' | 'goal';
  y: number;
}

export interface ChartInterval {
  series: string;
  x: number;
  lo: number;
  hi: number;
}

/**
 * Colours that read in Slack's light and dark themes alike: an opaque, neutral light-grey ground
 * (never transparent: a transparent PNG takes the theme's background, and dark text vanishes on a
 * dark one), near-black text, and a palette of mid-tone hues that keep their contrast on it.
 */
export const CHART_THEME = {
  background: '#f2f2ef',
  text: '#1d1d1b',
  grid: '#d6d6d1',
  muted: '#6b6b66',
  palette: ['#1f6fb2', '#d4600f', '#2e8b3e', '#c23b3b', '#6a4fb3', '#8c6418', '#0f8a8a', '#b03c83', '#4d4d4d', '#7a8f1c'],
} as const;

const RULE_DASH: Record<ChartRule['kind'], number[]> = { baseline: [2, 3], peer: [7, 4], goal: [12, 3, 2, 3] };

/** The PNG's size in pixels for these options. */
export function chartPixelSize(options: Pick<SpeedupChartOptions, 'width' | 'height' | 'scale'>): { width: number; height: number } {
  const { width, height, scale } = resolveSize(options);
  return { width: Math.round(width * scale), height: Math.round(height * scale) };
}

function resolveSize(options: Pick<SpeedupChartOptions, 'width' | 'height' | 'scale'>) {
  const width = options.width ?? DEFAULT_CHART.width;
  const height = options.height ?? DEFAULT_CHART.height;
  const scale = options.scale ?? DEFAULT_CHART.scale;
  for (const [name, v, lo, hi] of [['width', width, 200, 4000], ['height', height, 120, 4000], ['scale', scale, 0.5, 4]] as const) {
    if (!Number.isFinite(v) || v < lo || v > hi) throw new RangeError(`chart ${name} must be between ${lo} and ${hi} (got ${v})`);
  }
  return { width, height, scale };
}

// Families most Linux hosts have; resvg falls back to any installed font when none of them is there.
const FONT = 'DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif';
/** 24-hour clock labels; a new day shows its date (Vega's default is a 12-hour clock). */
const TIME_FORMAT = { year: '%Y', quarter: '%b %d', month: '%b %d', week: '%b %d', date: '%b %d', hours: '%H:%M', minutes: '%H:%M', seconds: '%H:%M:%S', milliseconds: '%H:%M:%S' };
const PALETTE = [...CHART_THEME.palette];

function xValue(p: SpeedupPoint, options: SpeedupChartOptions): number {
  if (options.x === 'evaluation') {
    if (typeof p.x !== 'number') throw new TypeError(`an evaluation chart needs evaluation numbers on x (series ${p.series})`);
    return p.x;
  }
  if (!(p.x instanceof Date)) throw new TypeError(`a time chart needs dates on x (series ${p.series})`);
  // Vega formats times in UTC or the process's zone only: shift to the zone's wall clock, show as UTC.
  const zone = options.timeZone ?? 'UTC';
  return p.x.getTime() + zoneOffsetMs(p.x, zone);
}

/** The Vega-Lite specification of a speedup chart (exported for tests and for people tuning it). */
export function buildSpeedupChartSpec(points: SpeedupPoint[], options: SpeedupChartOptions): TopLevelSpec {
  const { width, height } = resolveSize(options);
  const base = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width,
    height,
    // `fit` + `padding`: the whole picture (axes, legend, title) is exactly width × height.
    autosize: { type: 'fit', contains: 'padding' },
    padding: 12,
    background: CHART_THEME.background,
    config: {
      font: FONT,
      view: { stroke: null },
      axis: {
        labelFontSize: 11,
        titleFontSize: 12,
        gridColor: CHART_THEME.grid,
        labelColor: CHART_THEME.text,
        titleColor: CHART_THEME.text,
        domainColor: CHART_THEME.muted,
        tickColor: CHART_THEME.muted,
      },
      legend: { labelFontSize: 11, titleFontSize: 12, orient: 'bottom', symbolStrokeWidth: 2, labelLimit: 360, columns: 3, labelColor: CHART_THEME.text, titleColor: CHART_THEME.text },
      title: { fontSize: 14, anchor: 'start', color: CHART_THEME.text },
    },
    ...(options.title ? { title: options.title } : {}),
  } as const;
  const valid = points.filter((p) => Number.isFinite(p.speedup));
  if (valid.length === 0) {
    return {
      ...base,
      data: { values: [{ text: options.emptyText ?? 'No correct candidates yet' }] },
      mark: { type: 'text', fontSize: 14, color: CHART_THEME.muted },
      encoding: { text: { field: 'text', type: 'nominal' } },
    } as TopLevelSpec;
  }
  const styleOf = (series: string): SeriesStyle => options.styles?.[series] ?? 'step';
  const rows = valid.map((p) => ({ series: p.series, x: xValue(p, options), speedup: p.speedup }));
  const rules = (options.rules ?? []).filter((r) => Number.isFinite(r.y));
  const intervals = (options.intervals ?? []).filter((i) => Number.isFinite(i.lo) && Number.isFinite(i.hi));
  const seriesNames = [...new Set([...rows.map((r) => r.series), ...rules.map((r) => r.series)])];
  const xEncoding =
    options.x === 'time'
      ? { field: 'x', type: 'temporal', scale: { type: 'utc' }, axis: { format: TIME_FORMAT, labelOverlap: true }, title: `time (${options.timeZone ?? 'UTC'})` }
      : { field: 'x', type: 'quantitative', scale: { zero: false, nice: false }, axis: { tickMinStep: 1, format: 'd' }, title: 'evaluation' };
  const encoding = {
    x: xEncoding,
    y: { field: 'speedup', type: 'quantitative', scale: { zero: false }, title: options.yTitle ?? 'speedup vs baseline (x)' },
    color: { field: 'series', type: 'nominal', title: null, scale: { domain: seriesNames, range: PALETTE } },
  };
  const layer: unknown[] = [];
  if (options.reference !== null) {
    layer.push({
      data: { values: [{ y: options.reference ?? 1 }] },
      mark: { type: 'rule', strokeDash: [4, 4], color: CHART_THEME.muted },
      encoding: { y: { field: 'y', type: 'quantitative' } },
    });
  }
  if (rules.length > 0) {
    layer.push({
      data: { values: rules.map((r) => ({ series: r.series, kind: r.kind, speedup: r.y })) },
      mark: { type: 'rule', strokeWidth: 1.5 },
      encoding: {
        y: { field: 'speedup', type: 'quantitative' },
        color: encoding.color,
        strokeDash: { field: 'kind', type: 'nominal', scale: { domain: Object.keys(RULE_DASH), range: Object.values(RULE_DASH) }, legend: null },
      },
    });
  }
  if (intervals.length > 0) {
    layer.push({
      data: { values: intervals.map((i) => ({ series: i.series, x: i.x, lo: i.lo, hi: i.hi })) },
      mark: { type: 'rule', strokeWidth: 1.5, opacity: 0.7 },
      encoding: { x: xEncoding, y: { field: 'lo', type: 'quantitative' }, y2: { field: 'hi' }, color: encoding.color },
    });
  }
  for (const style of ['step', 'line', 'points'] as const) {
    const values = rows.filter((r) => styleOf(r.series) === style);
    if (values.length === 0) continue;
    const mark =
      style === 'points'
        ? { type: 'point', filled: true, opacity: 0.55, size: 30 }
        : { type: 'line', strokeWidth: 2, interpolate: style === 'step' ? 'step-after' : 'linear', point: { filled: true, size: 36 } };
    layer.push({ data: { values }, mark, encoding });
  }
  return { ...base, layer } as TopLevelSpec;
}

/** The chart as SVG text (what the PNG is rendered from). */
export async function renderSpeedupChartSvg(points: SpeedupPoint[], options: SpeedupChartOptions): Promise<string> {
  return renderVegaLiteSvg(buildSpeedupChartSpec(points, options));
}

/** Any Vega-Lite specification as SVG, through Vega's headless renderer. */
export async function renderVegaLiteSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * Any Vega-Lite specification as a PNG, through the same pipeline as the speedup charts (other
 * features draw their own charts with it: src/export's per-scenario speedups).
 */
export async function renderVegaLitePng(spec: TopLevelSpec, options: Pick<SpeedupChartOptions, 'scale' | 'fontFiles' | 'fontDirs'> = {}): Promise<Buffer> {
  return new Resvg(await renderVegaLiteSvg(spec), resvgOptions(options)).render().asPng();
}

function resvgOptions(options: Pick<SpeedupChartOptions, 'fontFiles' | 'fontDirs' | 'scale'>): ResvgRenderOptions {
  return {
    background: CHART_THEME.background,
    fitTo: { mode: 'zoom', value: options.scale ?? DEFAULT_CHART.scale },
    font: {
      loadSystemFonts: true,
      defaultFontFamily: 'DejaVu Sans',
      sansSerifFamily: 'DejaVu Sans',
      ...(options.fontFiles?.length ? { fontFiles: options.fontFiles } : {}),
      ...(options.fontDirs?.length ? { fontDirs: options.fontDirs } : {}),
    },
    logLevel: 'off',
  };
}

/**
 * A PNG chart of speedup: per series, over time (`x: 'time'`) or over evaluations (`x: 'evaluation'`).
 * The image is exactly `chartPixelSize(options)`. Bad input (a Date on an evaluation axis, a size
 * out of range) throws before anything is drawn.
 */
export async function renderSpeedupChart(points: SpeedupPoint[], options: SpeedupChartOptions): Promise<Buffer> {
  const svg = await renderSpeedupChartSvg(points, options);
  return new Resvg(svg, resvgOptions(options)).render().asPng();
}

/**
 * Whether this host can draw chart text: resvg draws text only with a font it can load, and a bare
 * container may have none. Charts still render without fonts, but with blank labels.
 */
export function chartTextRenders(options: Pick<SpeedupChartOptions, 'fontFiles' | 'fontDirs'> = {}): boolean {
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="30"><text x="4" y="22" font-family="sans-serif" font-size="18">1.25x</text></svg>';
  const { pixels } = new Resvg(svg, { ...resvgOptions({ ...options, scale: 1 }), background: undefined }).render();
  for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) return true;
  return false;
}
