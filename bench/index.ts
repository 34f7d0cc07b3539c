/**
 * `npm run bench`: runs every bench/*.bench.ts in turn, each in its own process (so one benchmark's
 * workers, connections and timers cannot disturb the next), and passes its output through.
 * `npm run bench -- queue` runs only the files whose name contains "queue".
 */
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const files = (await readdir(dir))
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();

if (files.length === 0) console.log(`no benchmark in bench/ matches ${filters.join(', ') || '*.bench.ts'}`);
const failed: string[] = [];
for (const file of files) {
  console.log(`\n=== ${file} ===`);
  const started = performance.now();
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(dir, file)], { stdio: 'inherit' });
    child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
  });
  console.log(`=== ${file}: ${code === 0 ? 'done' : `FAILED (exit ${code})`} in ${((performance.now() - started) / 1000).toFixed(0)} s ===`);
  if (code !== 0) failed.push(file);
}
if (failed.length > 0) {
  console.log(`\n${failed.length} benchmark(s) failed: ${failed.join(', ')}`);
  process.exitCode = 1;
}
