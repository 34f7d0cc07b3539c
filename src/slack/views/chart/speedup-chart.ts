import { encodePng } from './png.js';
import { Raster, type Rgb } from './raster.js';

/** One evaluation of a run, as the chart plots it. */
export interface ChartPoint {
  seq: number;
  /** Geomean speedup over the baseline; null when the candidate failed (no timing). */
  speedup: number | null;
  correct: boolean;
}

export interface SpeedupChartOptions {
  title: string;
  /** Drawn as a dashed line when given (the run's goal). */
  target?: number;
  width?: number;
  height?: number;
}

const INK: Rgb = [40, 40, 40];
const GRID: Rgb = [225, 225, 225];
const BEST: Rgb = [25, 135, 84];
const CORRECT: Rgb = [13, 110, 253];
const FAILED: Rgb = [220, 53, 69];
const BASELINE: Rgb = [120, 120, 120];
const TARGET: Rgb = [253, 126, 20];

function niceStep(range: number, ticks: number): number {
  const raw = range / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const n = raw / mag;
  return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * mag;
}

function label(v: number): string {
  return `${Number(v.toFixed(2))}x`;
}

/**
 * Speedup over the baseline for each evaluation of one run (dots; failed candidates as red crosses on
 * the axis), the best-so-far as a step line, the baseline (1x) and the target as dashed lines.
 */
export function renderSpeedupChart(points: ChartPoint[], options: SpeedupChartOptions): Buffer {
  const width = options.width ?? 800;
  const height = options.height ?? 400;
  const img = new Raster(width, height);
  const m = { left: 70, right: 24, top: 48, bottom: 52 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;

  const speeds = points.flatMap((p) => (p.correct && p.speedup !== null ? [p.speedup] : []));
  const yMax = Math.max(1.2, (options.target ?? 0) * 1.1, ...speeds.map((s) => s * 1.1));
  const seqs = points.map((p) => p.seq);
  const xMin = seqs.length ? Math.min(...seqs) : 1;
  const xMax = seqs.length ? Math.max(...seqs, xMin + 1) : 2;
  const px = (seq: number) => m.left + ((seq - xMin) / (xMax - xMin)) * plotW;
  const py = (v: number) => m.top + plotH - (Math.min(v, yMax) / yMax) * plotH;

  img.text(m.left, 14, options.title, INK, 2);
  const yStep = niceStep(yMax, 5);
  for (let v = 0; v <= yMax + 1e-9; v += yStep) {
    img.line(m.left, py(v), m.left + plotW, py(v), GRID);
    const t = label(v);
    img.text(m.left - 8 - Raster.textWidth(t, 2), py(v) - 7, t, INK, 2);
  }
  const xStep = Math.max(1, Math.round(niceStep(xMax - xMin || 1, 8)));
  for (let s = Math.ceil(xMin / xStep) * xStep; s <= xMax; s += xStep) {
    img.line(px(s), m.top + plotH, px(s), m.top + plotH + 5, INK);
    const t = String(s);
    img.text(px(s) - Raster.textWidth(t, 2) / 2, m.top + plotH + 10, t, INK, 2);
  }
  const xTitle = 'EVALUATION';
  img.text(m.left + plotW / 2 - Raster.textWidth(xTitle, 2) / 2, height - 20, xTitle, INK, 2);
  img.line(m.left, m.top, m.left, m.top + plotH, INK, 2);
  img.line(m.left, m.top + plotH, m.left + plotW, m.top + plotH, INK, 2);

  img.line(m.left, py(1), m.left + plotW, py(1), BASELINE, 2, 6);
  if (options.target) img.line(m.left, py(options.target), m.left + plotW, py(options.target), TARGET, 2, 10);

  let best: number | null = null;
  let last: { x: number; y: number } | null = null;
  for (const p of [...points].sort((a, b) => a.seq - b.seq)) {
    if (p.correct && p.speedup !== null && (best === null || p.speedup > best)) best = p.speedup;
    if (best !== null) {
      const here = { x: px(p.seq), y: py(best) };
      if (last) {
        img.line(last.x, last.y, here.x, last.y, BEST, 3);
        img.line(here.x, last.y, here.x, here.y, BEST, 3);
      }
      last = here;
    }
  }
  for (const p of points) {
    if (p.correct && p.speedup !== null) img.disc(px(p.seq), py(p.speedup), 4, CORRECT);
    else img.cross(px(p.seq), m.top + plotH - 6, 4, FAILED);
  }

  const legend: [string, Rgb][] = [['BEST SO FAR', BEST], ['CORRECT', CORRECT], ['FAILED', FAILED], ['1x BASELINE', BASELINE]];
  if (options.target) legend.push(['TARGET', TARGET]);
  let lx = m.left + plotW;
  for (const [name, colour] of legend.reverse()) {
    lx -= Raster.textWidth(name, 1) + 22;
    img.rect(lx, 34, 10, 6, colour);
    img.text(lx + 14, 34, name, INK, 1);
  }
  return encodePng(width, height, img.pixels);
}
