/**
 * How long the digest takes on a busy day: computing the figures over a seeded store (PGlite in
 * memory, and PostgreSQL when BENCH_DATABASE_URL or the test server is reachable), rendering the
 * blocks, and drawing the charts. Prints figures; asserts nothing.
 *
 *   npx tsx bench/digest.bench.ts            (BENCH_RUNS, BENCH_EVALS_PER_RUN to change the load)
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createStore, openDatabase, tables, type Store } from '../src/db/index.js';
import {
  computeDigest,
  digestChartPoints,
  renderDigestBlocks,
  renderDigestText,
  renderSpeedupChart,
  RUN_SERIES_STYLES,
  runSpeedupPoints,
} from '../src/digest/index.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 60);
const EVALS_PER_RUN = Number(process.env.BENCH_EVALS_PER_RUN ?? 150);
const STEPS_PER_EVAL = 3;
const TASKS = ['rmsnorm', 'flash_attn_fwd', 'cpu_softmax', 'layernorm', 'gemm_bf16', 'softmax_online'];
const END = new Date('2026-03-14T09:00:00Z');
const HOUR = 3600_000;

/** A deterministic pseudo-random stream, so every run of the bench seeds the same data. */
function rng(seed: number) {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

async function seed(store: Store): Promise<number> {
  const rand = rng(7);
  let rows = 0;
  for (let r = 0; r < RUNS; r += 1) {
    const id = `ks-bench${String(r).padStart(3, '0')}`;
    const task = TASKS[r % TASKS.length]!;
    // Runs spread over the two days before the window's end.
    const start = new Date(END.getTime() - 48 * HOUR + rand() * 40 * HOUR);
    await store.db.insert(tables.runs).values({
      id, task, owner: 'U0BENCH', origin: 'slack', status: r % 4 === 0 ? 'finished' : 'running', model: 'claude-bench', target: 1.1,
      questionTimeoutSeconds: 600, budgetEvals: 500, budgetSteps: 2000, budgetUsd: 100, budgetSeconds: 86400, arch: 'sm_90', createdAt: start,
      ...(r % 4 === 0 ? { finishedAt: new Date(start.getTime() + 8 * HOUR) } : {}),
    });
    const evals = [];
    const steps = [];
    let best = 1;
    for (let e = 1; e <= EVALS_PER_RUN; e += 1) {
      const at = new Date(start.getTime() + (e / EVALS_PER_RUN) * 8 * HOUR);
      const ok = rand() > 0.3;
      const speedup = ok ? 0.6 + rand() * (0.5 + e / EVALS_PER_RUN) : null;
      if (speedup && speedup > best) best = speedup;
      evals.push({
        runId: id, seq: e, task, candidateHash: `${id}-${e}`, source: '// kernel '.repeat(200), status: ok ? ('ok' as const) : ('incorrect' as const),
        correct: ok, speedupVsBaseline: speedup, speedupVsBestPeer: speedup && speedup / 2, harnessSeconds: 20 + rand() * 40, arch: 'sm_90',
        result: { schema: 'kernelseek.eval/1', summary: { best_peer: 'cudnn' }, scenarios: Array.from({ length: 40 }, (_, i) => ({ id: `s${i}`, time_ms: rand() })) },
        queuedAt: at, finishedAt: at,
      });
      for (let s = 0; s < STEPS_PER_EVAL; s += 1) {
        steps.push({ runId: id, seq: e * STEPS_PER_EVAL + s, model: 'claude-bench', request: {}, costUsd: 0.01 + rand() * 0.05, inputTokens: 20_000, outputTokens: 800, createdAt: at });
      }
    }
    for (let i = 0; i < evals.length; i += 200) await store.db.insert(tables.evaluations).values(evals.slice(i, i + 200));
    for (let i = 0; i < steps.length; i += 500) await store.db.insert(tables.agentSteps).values(steps.slice(i, i + 500));
    const questions = Array.from({ length: 8 }, (_, q) => {
      const seq = Math.floor(((q + 1) / 9) * EVALS_PER_RUN);
      return {
        runId: id, source: q % 2 ? ('bank' as const) : ('human' as const), bankId: q % 2 ? `bank-${q}` : null, text: `Question ${q} of run ${r}?`,
        author: q % 2 ? 'bank' : `U0P${q}`, evalSeqAtAsk: seq, bestBefore: 1, bestAfter: 1 + rand() * (best - 1), gain: null,
        evalsAfter: 5, createdAt: new Date(start.getTime() + (seq / EVALS_PER_RUN) * 8 * HOUR),
      };
    });
    await store.db.insert(tables.questions).values(questions);
    rows += 1 + evals.length + steps.length + questions.length;
  }
  return rows;
}

async function time<T>(label: string, fn: () => Promise<T> | T, repeat = 5): Promise<T> {
  let result!: T;
  const ms: number[] = [];
  for (let i = 0; i < repeat; i += 1) {
    const t0 = performance.now();
    result = await fn();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  console.log(`  ${label.padEnd(46)} median ${ms[Math.floor(ms.length / 2)]!.toFixed(1).padStart(8)} ms   min ${ms[0]!.toFixed(1).padStart(8)} ms   (n=${repeat})`);
  return result;
}

async function benchStore(kind: string, store: Store) {
  const t0 = performance.now();
  const rows = await seed(store);
  console.log(`\n${kind}: seeded ${rows} rows (${RUNS} runs x ${EVALS_PER_RUN} evaluations) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const window = { from: new Date(END.getTime() - 24 * HOUR), to: END };
  const figures = await time('computeDigest (24 h window)', () => computeDigest(store, window));
  console.log(`    window: ${figures.evaluations.total} evaluations, ${figures.runs.list.length} runs, ${figures.tasks.length} task lines, ${figures.questions.top.length} top questions`);
  await time('renderDigestBlocks + renderDigestText', () => [renderDigestBlocks(figures, { timeZone: 'UTC' }), renderDigestText(figures, { timeZone: 'UTC' })]);
  return figures;
}

async function postgresUrl(): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const admin = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const name = `ks_bench_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  try {
    await client.connect();
    await client.query(`create database ${name}`);
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

const memory = await openDatabase({ kind: 'memory' });
await memory.migrate();
const figures = await benchStore('PGlite (in memory)', createStore(memory.db));
await memory.close();

const pgdb = await postgresUrl();
if (pgdb) {
  const handle = await openDatabase({ kind: 'postgres', url: pgdb.url });
  await handle.migrate();
  await benchStore('PostgreSQL', createStore(handle.db));
  await handle.close();
  await pgdb.drop();
} else {
  console.log('\nPostgreSQL: not reachable, skipped');
}

console.log('\ncharts (Vega-Lite → SVG → PNG)');
const points = digestChartPoints(figures);
await time(`digest chart, ${figures.tasks.length} series, 1600x800 px`, () => renderSpeedupChart(points, { x: 'time' }));
const runEvals = Array.from({ length: 500 }, (_, i) => ({ seq: i + 1, status: 'ok' as const, correct: true, scenarios: 'all', speedupVsBaseline: 0.8 + Math.sin(i / 30) * 0.2 + i / 1000 }));
await time('run chart, 500 evaluations, 1600x800 px', () => renderSpeedupChart(runSpeedupPoints(runEvals), { x: 'evaluation', styles: RUN_SERIES_STYLES }));
const png = await renderSpeedupChart(points, { x: 'time' });
console.log(`  digest chart PNG: ${(png.length / 1024).toFixed(0)} KiB`);
