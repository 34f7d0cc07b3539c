import { describe, expect, it } from 'vitest';
import {
  buildSpeedupChartSpec,
  chartPixelSize,
  chartTextRenders,
  digestChartPoints,
  renderSpeedupChart,
  renderSpeedupChartSvg,
  RUN_SERIES,
  RUN_SERIES_STYLES,
  runSpeedupPoints,
  type SpeedupPoint,
} from '../../src/digest/index.js';
import type { DigestFigures } from '../../src/digest/index.js';
import { decodePng } from './png.js';

const from = new Date('2026-03-13T09:00:00Z');
const to = new Date('2026-03-14T09:00:00Z');
const hours = (n: number) => new Date(from.getTime() + n * 3600_000);

const points: SpeedupPoint[] = [
  { series: 'rmsnorm (sm_90)', x: from, speedup: 1.25 },
  { series: 'rmsnorm (sm_90)', x: hours(1), speedup: 1.5 },
  { series: 'rmsnorm (sm_90)', x: to, speedup: 1.5 },
  { series: 'flash_attn_fwd (sm_90)', x: from, speedup: 1 },
  { series: 'flash_attn_fwd (sm_90)', x: hours(2.5), speedup: 1.125 },
  { series: 'flash_attn_fwd (sm_90)', x: to, speedup: 1.125 },
];

describe('speedup charts', () => {
  it('renders a PNG of exactly the requested size', async () => {
    const png = await renderSpeedupChart(points, { x: 'time', title: 'Best speedup, last 24 h' });
    const info = decodePng(png);
    expect({ width: info.width, height: info.height }).toEqual({ width: 1600, height: 800 });
    expect(chartPixelSize({})).toEqual({ width: 1600, height: 800 });
    expect(info.chunks).toContain('IDAT');

    const small = decodePng(await renderSpeedupChart(points, { x: 'time', width: 640, height: 300, scale: 1 }));
    expect({ width: small.width, height: small.height }).toEqual({ width: 640, height: 300 });
    const odd = decodePng(await renderSpeedupChart(points, { x: 'time', width: 333, height: 222, scale: 1.5 }));
    expect({ width: odd.width, height: odd.height }).toEqual(chartPixelSize({ width: 333, height: 222, scale: 1.5 }));
  });

  it('draws its text with a font (labels change the pixels)', async () => {
    expect(chartTextRenders()).toBe(true);
    const a = await renderSpeedupChart(points, { x: 'time', title: 'Speedup', scale: 1 });
    const b = await renderSpeedupChart(points, { x: 'time', title: 'Spxxdup', scale: 1 });
    expect(a.equals(b)).toBe(false);
  });

  it('labels a time axis with the wall clock of the digest zone and names the series', async () => {
    const utc = await renderSpeedupChartSvg(points, { x: 'time' });
    const berlin = await renderSpeedupChartSvg(points, { x: 'time', timeZone: 'Europe/Berlin' });
    const labels = (svg: string) => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(labels(utc)).toEqual(expect.arrayContaining(['09:00', 'time (UTC)', 'rmsnorm (sm_90)', 'flash_attn_fwd (sm_90)', 'speedup vs baseline (x)']));
    // The window opens at 09:00 UTC, which is 10:00 in Berlin in March.
    expect(labels(utc).filter((l) => /^\d\d:00$/.test(l!))[0]).toBe('09:00');
    expect(labels(berlin).filter((l) => /^\d\d:00$/.test(l!))[0]).toBe('10:00');
    expect(labels(berlin)).toContain('time (Europe/Berlin)');
  });

  it('rejects input that does not fit the axis or a size out of range, before drawing', async () => {
    await expect(renderSpeedupChart([{ series: 'a', x: from, speedup: 1 }], { x: 'evaluation' })).rejects.toThrow(/evaluation numbers/);
    await expect(renderSpeedupChart([{ series: 'a', x: 3, speedup: 1 }], { x: 'time' })).rejects.toThrow(/dates on x/);
    await expect(renderSpeedupChart(points, { x: 'time', width: 10 })).rejects.toThrow(/width must be between/);
  });

  it('renders an empty chart that says so, at the same size', async () => {
    const svg = await renderSpeedupChartSvg([], { x: 'evaluation', emptyText: 'No correct candidates yet' });
    expect(svg).toContain('No correct candidates yet');
    const info = decodePng(await renderSpeedupChart([], { x: 'evaluation', width: 400, height: 200, scale: 1 }));
    expect([info.width, info.height]).toEqual([400, 200]);
  });

  it('builds one run’s series: counted candidates as points, best so far from the baseline', () => {
    const evals = [
      { seq: 1, status: 'ok' as const, correct: true, scenarios: 'all', speedupVsBaseline: 0.9 },
      { seq: 2, status: 'incorrect' as const, correct: false, scenarios: 'all', speedupVsBaseline: null },
      { seq: 3, status: 'ok' as const, correct: true, scenarios: 'all', speedupVsBaseline: 1.25 },
      { seq: 4, status: 'ok' as const, correct: true, scenarios: 'quick', speedupVsBaseline: 9 },
      { seq: 5, status: 'ok' as const, correct: true, scenarios: 'all', speedupVsBaseline: 1.125 },
      { seq: 6, status: 'compile_error' as const, correct: null, scenarios: 'all', speedupVsBaseline: null },
      { seq: 7, status: 'pending' as const, correct: null, scenarios: 'all', speedupVsBaseline: null },
    ];
    expect(runSpeedupPoints(evals)).toEqual([
      { series: RUN_SERIES.best, x: 0, speedup: 1 },
      { series: RUN_SERIES.candidates, x: 1, speedup: 0.9 },
      { series: RUN_SERIES.candidates, x: 3, speedup: 1.25 },
      { series: RUN_SERIES.best, x: 3, speedup: 1.25 },
      { series: RUN_SERIES.candidates, x: 5, speedup: 1.125 },
      { series: RUN_SERIES.best, x: 6, speedup: 1.25 },
    ]);
    expect(runSpeedupPoints(evals.filter((e) => e.seq === 2))).toEqual([]);
    const spec = JSON.stringify(buildSpeedupChartSpec(runSpeedupPoints(evals), { x: 'evaluation', styles: RUN_SERIES_STYLES }));
    expect(spec).toContain('"step-after"');
    expect(spec).toContain('"type":"point"');
  });

  it('draws the digest per task from the previous best through each new best to the window end', () => {
    const figures = {
      window: { from: from.toISOString(), to: to.toISOString() },
      tasks: [
        { task: 'rmsnorm', arch: 'sm_90', previousBest: 1.25, progress: [{ at: hours(1).toISOString(), speedup: 1.5 }], best: { speedupVsBaseline: 1.5 } },
        { task: 'cpu_softmax', arch: null, previousBest: null, progress: [], best: { speedupVsBaseline: 0.8 } },
        { task: 'idle', arch: 'sm_90', previousBest: 2, progress: [], best: null },
      ],
    } as unknown as DigestFigures;
    expect(digestChartPoints(figures)).toEqual([
      { series: 'rmsnorm (sm_90)', x: from, speedup: 1.25 },
      { series: 'rmsnorm (sm_90)', x: hours(1), speedup: 1.5 },
      { series: 'rmsnorm (sm_90)', x: to, speedup: 1.5 },
      { series: 'cpu_softmax', x: from, speedup: 1 },
      { series: 'cpu_softmax', x: to, speedup: 1 },
    ]);
  });
});
