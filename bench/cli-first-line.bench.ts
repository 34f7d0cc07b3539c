/**
 * How fast `kernelseek run` says something and `kernelseek runs` answers, on the embedded database
 * (issue 42: 3-16 s before `run`'s first line, 3-13 s for `runs`). Runs the bin as a person does
 * (compiled dist/, so `npm run build` first), each in a fresh process, and prints medians; asserts
 * nothing.
 *
 *   npm run bench -- cli-first-line          (or: npx tsx bench/cli-first-line.bench.ts [rounds=5])
 *
 * - `run` first line: from spawn to the first line on stdout ("Starting a run of …").
 * - `run` started: to the line naming the run (the database opened, the run created); cold = a data
 *   directory that does not exist yet (the embedded database is created), warm = one that exists.
 *   The process is stopped there (SIGTERM, as Ctrl-C): no model answers (the API address is a closed port).
 * - `runs`: to exit; cold = no current snapshot of the run list (first call, or after a write the
 *   snapshot does not cover), so the database is opened; warm = the snapshot is current.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'kernelseek.js');
const rounds = Number(process.argv[2] ?? 5);
if (!existsSync(path.join(root, 'dist', 'cli', 'main.js'))) console.log('note: no dist/ build, so the bin runs through tsx: run `npm run build` first');

function envFor(dataDir: string): NodeJS.ProcessEnv {
  const { DATABASE_URL: _ignored, ...rest } = process.env;
  return { ...rest, KERNELSEEK_DATA_DIR: dataDir, ANTHROPIC_API_KEY: 'sk-ant-bench', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', LOG_LEVEL: 'silent' };
}

/**
 * Milliseconds from spawn until stdout matches each pattern (in order). After the last, the process
 * is stopped as Ctrl-C stops it (SIGTERM: the run is stopped, the database closed cleanly, so the
 * next round does not time a crash recovery); the result comes once it has exited.
 */
function timeLines(args: string[], env: NodeJS.ProcessEnv, patterns: RegExp[]): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const at: number[] = [];
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += String(d);
      while (at.length < patterns.length && patterns[at.length]!.test(out)) at.push(performance.now() - started);
      if (at.length === patterns.length && child.exitCode === null && !child.killed) child.kill('SIGTERM');
    });
    child.stderr.on('data', (d: Buffer) => (err += String(d)));
    child.on('exit', () => (at.length === patterns.length ? resolve(at) : reject(new Error(`${args.join(' ')}: got ${at.length} of ${patterns.length} lines:\n${out}\n${err}`))));
  });
}

/** Milliseconds from spawn to exit. */
function timeExit(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += String(d)));
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`${args.join(' ')} exited ${code}: ${err}`))));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (xs: number[]) => `${median(xs).toFixed(0).padStart(6)} ms median (${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})`;

const tmp = await mkdtemp(path.join(os.tmpdir(), 'ks-bench-first-line-'));
try {
  const firstCold: number[] = [];
  const startedCold: number[] = [];
  const firstWarm: number[] = [];
  const startedWarm: number[] = [];
  const runsCold: number[] = [];
  const runsWarm: number[] = [];
  const warmDir = path.join(tmp, 'warm');
  // One run first, so the warm data directory has its database.
  await timeLines(['run', 'cpu_softmax'], envFor(warmDir), [/^Run ks-/m]);
  for (let i = 0; i < rounds; i += 1) {
    const [f, s] = await timeLines(['run', 'cpu_softmax'], envFor(path.join(tmp, `cold-${i}`)), [/./, /^Run ks-/m]);
    firstCold.push(f!);
    startedCold.push(s!);
    const [fw, sw] = await timeLines(['run', 'cpu_softmax'], envFor(warmDir), [/./, /^Run ks-/m]);
    firstWarm.push(fw!);
    startedWarm.push(sw!);
    // `runs` with no snapshot (cold), then with the one that call wrote (warm).
    await rm(path.join(warmDir, 'runs-snapshot.json'), { force: true });
    runsCold.push(await timeExit(['runs'], envFor(warmDir)));
    runsWarm.push(await timeExit(['runs'], envFor(warmDir)));
  }
  console.log(`kernelseek on the embedded database, ${rounds} rounds each, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')}:`);
  console.log(`  run: first line, new data dir        ${fmt(firstCold)}`);
  console.log(`  run: first line, existing data dir   ${fmt(firstWarm)}`);
  console.log(`  run: run started, new data dir       ${fmt(startedCold)}`);
  console.log(`  run: run started, existing data dir  ${fmt(startedWarm)}`);
  console.log(`  runs: no current snapshot (cold)     ${fmt(runsCold)}`);
  console.log(`  runs: current snapshot (warm)        ${fmt(runsWarm)}`);
} finally {
  await rm(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}
