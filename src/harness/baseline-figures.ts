import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isPythonBaseline } from './candidate.js';
import type { EvalResult } from './result.js';
import type { LoadedTask } from './tasks.js';

/**
 * The baseline's last known speed against the peers, kept per task under the data folder
 * (`<dataDir>/baselines/<task>.json`) whenever an evaluation timed both (`kernelseek eval`, `task
 * init`): the task check warns from it when the baseline already meets the goal. A figure is used
 * only while the baseline is the one it was measured on (its digest).
 */
export interface BaselineFigures {
  task: string;
  recordedAt: string;
  device: string;
  gpu: string | null;
  /** Scenarios with both figures. */
  scenarios: number;
  /** The baseline's speedup over each peer (geomean of peer_ms / baseline_ms). */
  vsPeer: Record<string, number>;
  /** sha256 of the baseline's files when it was measured. */
  baselineDigest: string;
}

const fileOf = (dataDir: string, task: string) => path.join(dataDir, 'baselines', `${task}.json`);

/** sha256 over the baseline's files (a file, or every file of a folder, by relative path). */
export async function digestBaseline(task: LoadedTask): Promise<string> {
  const hash = createHash('sha256');
  const baseline = task.task.kernel.baseline;
  if (isPythonBaseline(baseline)) return hash.update(baseline).digest('hex');
  const root = path.join(task.dir, baseline);
  const walk = async (rel: string): Promise<void> => {
    const full = path.join(root, rel);
    const st = await stat(full);
    if (st.isDirectory()) {
      for (const name of (await readdir(full)).sort()) await walk(rel ? `${rel}/${name}` : name);
    } else hash.update(`${rel}\0${st.size}\0`).update(await readFile(full));
  };
  await walk('');
  return hash.digest('hex');
}

/** The baseline's figures in a result, or undefined when it timed no peer beside the baseline. */
export function baselineFiguresOf(result: EvalResult): Omit<BaselineFigures, 'baselineDigest' | 'recordedAt'> | undefined {
  const ratios: Record<string, number[]> = {};
  let scenarios = 0;
  for (const s of result.scenarios) {
    const base = s.baseline_ms;
    if (typeof base !== 'number' || !(base > 0)) continue;
    let any = false;
    for (const [peer, ms] of Object.entries(s.peer_ms ?? {})) {
      if (typeof ms !== 'number' || !(ms > 0)) continue;
      (ratios[peer] ??= []).push(ms / base);
      any = true;
    }
    if (any) scenarios++;
  }
  const vsPeer = Object.fromEntries(Object.entries(ratios).map(([p, r]) => [p, Math.exp(r.reduce((a, x) => a + Math.log(x), 0) / r.length)]));
  if (Object.keys(vsPeer).length === 0) return undefined;
  return { task: result.task, device: result.device, gpu: result.gpu ?? null, scenarios, vsPeer };
}

/** Keeps the baseline's figures from `result` (a no-op when it has none). Never throws: a note, not a result. */
export async function recordBaselineFigures(dataDir: string, task: LoadedTask, result: EvalResult, now = new Date()): Promise<BaselineFigures | undefined> {
  const figures = baselineFiguresOf(result);
  if (!figures) return undefined;
  try {
    const record: BaselineFigures = { ...figures, recordedAt: now.toISOString(), baselineDigest: await digestBaseline(task) };
    const file = fileOf(dataDir, task.task.name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(`${file}.tmp`, `${JSON.stringify(record, null, 1)}\n`);
    await rename(`${file}.tmp`, file);
    return record;
  } catch {
    return undefined;
  }
}

/** The last figures of this task's current baseline, or undefined. */
export async function readBaselineFigures(dataDir: string, task: LoadedTask): Promise<BaselineFigures | undefined> {
  try {
    const record = JSON.parse(await readFile(fileOf(dataDir, task.task.name), 'utf8')) as BaselineFigures;
    if (record.baselineDigest !== (await digestBaseline(task))) return undefined;
    return record;
  } catch {
    return undefined;
  }
}
