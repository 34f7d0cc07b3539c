/**
 * How long `kernelseek --help` and `--version` take to start, next to `node -e 0` (the floor: a
 * Node process doing nothing) and next to a command that loads its modules (`help eval`). Runs the
 * bin as a person does (compiled dist/, so `npm run build` first). Prints figures; asserts nothing.
 *
 *   npx tsx bench/cli-startup.bench.ts [rounds=10]
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'kernelseek.js');
const rounds = Number(process.argv[2] ?? 10);
if (!existsSync(path.join(root, 'dist', 'cli', 'main.js'))) console.log('note: no dist/ build, so the bin runs through tsx: run `npm run build` first');

function time(args: string[]): { median: number; min: number } {
  const ms: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const started = performance.now();
    const r = spawnSync(process.execPath, args, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    ms.push(performance.now() - started);
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${String(r.stderr)}`);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[Math.floor(ms.length / 2)]!, min: ms[0]! };
}

const floor = time(['-e', '0']);
const rows: [string, { median: number; min: number }][] = [
  ['node -e 0', floor],
  ['kernelseek --version', time([bin, '--version'])],
  ['kernelseek --help', time([bin, '--help'])],
  ['kernelseek help eval', time([bin, 'help', 'eval'])],
];
console.log(`start-up, ${rounds} rounds each (median / fastest, ms; x = median over node -e 0's):`);
for (const [what, t] of rows) {
  console.log(`  ${what.padEnd(22)} ${t.median.toFixed(0).padStart(6)} / ${t.min.toFixed(0).padStart(5)}   ${(t.median / floor.median).toFixed(1).padStart(5)}x`);
}
