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
  /** Extra font files or directories, for hosts without system fonts (see chartTextRenders). */
  fontFiles?: string[];
  fontDirs?: string[];
}

export const DEFAULT_CHART = { width: 800, height: 400, scale: 2 } as const;

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
const PALETTE = ['#4c78a8', '#f58518', '#54a24b', '#e45756', '#72b7b2', '#b279a2', '#eeca3b', '#9d755d', '#ff9da6', '#bab0ac'];

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
    background: 'white',
    config: {
      font: FONT,
      view: { stroke: null },
      axis: { labelFontSize: 11, titleFontSize: 12, gridColor: '#e6e6e6' },
      legend: { labelFontSize: 11, titleFontSize: 12, orient: 'bottom', symbolStrokeWidth: 2, labelLimit: 360, columns: 3 },
      title: { fontSize: 14, anchor: 'start' },
    },
    ...(options.title ? { title: options.title } : {}),
  } as const;
  const valid = points.filter((p) => Number.isFinite(p.speedup));
  if (valid.length === 0) {
    return {
      ...base,
      data: { values: [{ text: options.emptyText ?? 'No correct candidates yet' }] },
      mark: { type: 'text', fontSize: 14, color: '#666' },
      encoding: { text: { field: 'text', type: 'nominal' } },
    } as TopLevelSpec;
  }
  const styleOf = (series: string): SeriesStyle => options.styles?.[series] ?? 'step';
  const rows = valid.map((p) => ({ series: p.series, x: xValue(p, options), speedup: p.speedup }));
  const seriesNames = [...new Set(rows.map((r) => r.series))];
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
      mark: { type: 'rule', strokeDash: [4, 4], color: '#999' },
      encoding: { y: { field: 'y', type: 'quantitative' } },
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
    background: 'white',
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
