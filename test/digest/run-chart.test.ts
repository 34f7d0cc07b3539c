import { describe, expect, it } from 'vitest';
import {
  buildRunChartSpec,
  buildSpeedupChartSpec,
  CHART_THEME,
  describeRunChart,
  digestChartPoints,
  digestChartRules,
  renderRunChart,
  renderSpeedupChart,
  scheduledWindow,
  type DigestFigures,
  type RunChartInput,
} from '../../src/digest/index.js';
import { loadConfig } from '../../src/config/index.js';
import { decodePngPixels } from './png.js';

// Golden tests of what the charts plot: the Vega-Lite specification's data values, worked out by
// hand from the evaluations below (not pixels). And the picture itself: opaque, on a neutral ground
// that reads in Slack's light and dark themes.

const summary = (vsBaseline: number, vsPeer: Record<string, number>, ci: [number, number] | null) => ({
  summary: { speedup_vs_baseline_geomean: vsBaseline, speedup_vs_peer_geomean: vsPeer, speedup_vs_baseline_ci: ci },
});
const ok = (seq: number, speedup: number, result: ReturnType<typeof summary>, scenarios = 'all') => ({ seq, status: 'ok' as const, correct: true, scenarios, speedupVsBaseline: speedup, result });

const RUN: RunChartInput = {
  runId: 'ks-golden01',
  task: 'cpu_softmax',
  target: 1.1,
  goalVs: 'best_peer',
  evaluations: [
    ok(1, 1.25, summary(1.25, { torch: 1.25, onednn: 1.5625 }, [1.2, 1.3])),
    { seq: 2, status: 'incorrect', correct: false, scenarios: 'all', speedupVsBaseline: null, result: null },
    // The best: measured beside it, torch ran at 1.5 / 1.2 = 1.25x the baseline, onednn at 1.5 / 1.5 = 1.0x.
    ok(3, 1.5, summary(1.5, { torch: 1.2, onednn: 1.5 }, [1.375, 1.625])),
    // A quick-set candidate never counts, however fast.
    ok(4, 3, summary(3, { torch: 2 }, [2.5, 3.5]), 'quick'),
    ok(5, 1.375, summary(1.375, { torch: 1.1 }, null)),
    { seq: 6, status: 'pending', correct: null, scenarios: 'all', speedupVsBaseline: null, result: null },
  ],
};

/** Each layer's plotted values, numbers rounded (1.5 / 1.2 is 1.2499999999999998 in floating point). */
function plotted(spec: unknown): unknown[][] {
  const round = (v: unknown): unknown =>
    typeof v === 'number' ? Math.round(v * 1e9) / 1e9 : Array.isArray(v) ? v.map(round) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, round(x)])) : v;
  return (spec as { layer: { data: { values: unknown[] } }[] }).layer.map((l) => round(l.data.values) as unknown[]);
}

describe("a run's chart", () => {
  it('plots each counted candidate with its interval, the best so far, and the baseline, peer and goal lines', () => {
    const layers = plotted(buildRunChartSpec(RUN));
    expect(layers).toEqual([
      // Lines across: the baseline; each peer as measured beside the best (eval #3: 1.5 / 1.2 and
      // 1.5 / 1.5); the goal, 1.1x the strongest peer (torch at 1.25x) = 1.375x the baseline.
      [
        { series: 'baseline (1.00x)', kind: 'baseline', speedup: 1 },
        { series: 'torch (peer)', kind: 'peer', speedup: 1.25 },
        { series: 'onednn (peer)', kind: 'peer', speedup: 1 },
        { series: 'goal 1.10x vs torch', kind: 'goal', speedup: 1.375 },
      ],
      // 95 % intervals of the counted candidates that have one (#5 has none; #4 is the quick set).
      [
        { series: 'correct candidates', x: 1, lo: 1.2, hi: 1.3 },
        { series: 'correct candidates', x: 3, lo: 1.375, hi: 1.625 },
      ],
      // The best so far, a step line from the baseline's 1.0, held to the last evaluation (#5).
      [
        { series: 'best so far', x: 0, speedup: 1 },
        { series: 'best so far', x: 1, speedup: 1.25 },
        { series: 'best so far', x: 3, speedup: 1.5 },
        { series: 'best so far', x: 5, speedup: 1.5 },
      ],
      // Each counted candidate.
      [
        { series: 'correct candidates', x: 1, speedup: 1.25 },
        { series: 'correct candidates', x: 3, speedup: 1.5 },
        { series: 'correct candidates', x: 5, speedup: 1.375 },
      ],
    ]);
    expect(describeRunChart(RUN)).toBe('ks-golden01: 3 counted candidate(s), best 1.50x vs baseline; torch (peer) at 1.25x, onednn (peer) at 1.00x, goal 1.10x vs torch at 1.38x.');
  });

  it('places a goal against the baseline at the target, and none when the task (and so its reference) is unknown', () => {
    const vsBaseline = plotted(buildRunChartSpec({ ...RUN, goalVs: 'baseline' }))[0];
    expect(vsBaseline).toContainEqual({ series: 'goal 1.10x vs baseline', kind: 'goal', speedup: 1.1 });
    const unknown = plotted(buildRunChartSpec({ ...RUN, goalVs: undefined }))[0] as { kind: string }[];
    expect(unknown.map((r) => r.kind)).toEqual(['baseline', 'peer', 'peer']);
    // Nothing correct yet: the peers still come from the latest measured evaluation; the chart says so.
    const none = buildRunChartSpec({ ...RUN, evaluations: [{ seq: 1, status: 'incorrect', correct: false, scenarios: 'all', speedupVsBaseline: null, result: null }] });
    expect(JSON.stringify(none)).toContain('No correct candidate yet');
  });

  it('is an opaque PNG on a neutral ground with dark text, readable in light and dark themes', async () => {
    const { rgba, width, height } = decodePngPixels(await renderRunChart(RUN, { width: 400, height: 240, scale: 1 }));
    expect([width, height]).toEqual([400, 240]);
    let transparent = 0;
    let dark = 0;
    for (let i = 0; i < rgba.length; i += 4) {
      if (rgba[i + 3] !== 255) transparent += 1;
      if (rgba[i]! < 80 && rgba[i + 1]! < 80 && rgba[i + 2]! < 80) dark += 1;
    }
    expect(transparent).toBe(0);
    // The corner is the theme's ground: neither white (glaring in the dark theme) nor transparent.
    const hex = `#${[0, 1, 2].map((c) => rgba[c]!.toString(16).padStart(2, '0')).join('')}`;
    expect(hex).toBe(CHART_THEME.background);
    expect(hex).not.toBe('#ffffff');
    // Labels in near-black text are there to read.
    expect(dark).toBeGreaterThan(200);
  });
});

describe("the digest's chart", () => {
  const from = '2026-03-07T09:00:00.000Z';
  const to = '2026-03-14T09:00:00.000Z';
  const figures = {
    window: { from, to },
    tasks: [
      { task: 'rmsnorm', arch: 'sm_90', previousBest: 1.25, progress: [{ at: '2026-03-10T12:00:00.000Z', speedup: 1.5 }], best: { speedupVsBaseline: 1.5, speedupVsPeer: 0.75, peer: 'torch_compile' } },
      { task: 'flash_attn_fwd', arch: 'sm_90', previousBest: null, progress: [{ at: '2026-03-12T08:00:00.000Z', speedup: 2 }], best: { speedupVsBaseline: 2, speedupVsPeer: 1.6, peer: 'cudnn' } },
      { task: 'cpu_softmax', arch: null, previousBest: null, progress: [], best: { speedupVsBaseline: 0.8, speedupVsPeer: null, peer: null } },
    ],
  } as unknown as DigestFigures;
  const goals = { rmsnorm: { vs: 'best_peer' as const, speedup: 1 }, flash_attn_fwd: { vs: 'baseline' as const, speedup: 1.5 }, cpu_softmax: { vs: 'best_peer' as const, speedup: 1 } };

  it("draws each task's peer and goal as lines, as a run's chart does, over a week's window", () => {
    const rules = digestChartRules(figures, (task) => goals[task as keyof typeof goals]);
    expect(rules).toEqual([
      // rmsnorm's best ran at 1.5x the baseline and 0.75x torch_compile: the peer is at 2.0x; the goal, 1.0x that peer.
      { series: 'rmsnorm (sm_90) · torch_compile (peer)', kind: 'peer', y: 2 },
      { series: 'rmsnorm (sm_90) · goal 1.00x vs torch_compile', kind: 'goal', y: 2 },
      { series: 'flash_attn_fwd (sm_90) · cudnn (peer)', kind: 'peer', y: 1.25 },
      { series: 'flash_attn_fwd (sm_90) · goal 1.50x vs baseline', kind: 'goal', y: 1.5 },
      // cpu_softmax has no peer figure: its goal (vs the peer) cannot be placed, so no line rather than a wrong one.
    ]);
    const spec = buildSpeedupChartSpec(digestChartPoints(figures), { x: 'time', rules });
    const layers = plotted(spec);
    expect(layers[1]).toEqual(rules.map((r) => ({ series: r.series, kind: r.kind, speedup: r.y })));
    // The series span the week: from its start to its end.
    const times = (layers[2] as { x: number }[]).map((p) => p.x);
    expect(Math.min(...times)).toBe(Date.parse(from));
    expect(Math.max(...times)).toBe(Date.parse(to));
    expect(digestChartRules(figures)).toEqual(rules.filter((r) => r.kind === 'peer'));
  });

  it('renders the week with its lines', async () => {
    const png = decodePngPixels(await renderSpeedupChart(digestChartPoints(figures), { x: 'time', rules: digestChartRules(figures), width: 300, height: 200, scale: 1 }));
    expect(png.rgba[3]).toBe(255);
  });

  it('covers the window DIGEST_WINDOW names: a day or a week', () => {
    const at = new Date(to);
    expect(scheduledWindow(at, 'UTC').from.toISOString()).toBe('2026-03-13T09:00:00.000Z');
    expect(scheduledWindow(at, 'UTC', 'week').from.toISOString()).toBe(from);
    expect(loadConfig({ DIGEST_WINDOW: 'week' }, { cwd: '/tmp' }).digest.window).toBe('week');
    expect(loadConfig({}, { cwd: '/tmp' }).digest.window).toBe('day');
    expect(() => loadConfig({ DIGEST_WINDOW: 'month' }, { cwd: '/tmp' })).toThrow(/DIGEST_WINDOW: must be day or week/);
  });
});
