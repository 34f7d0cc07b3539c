import { readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CANDIDATE_DIR_PREFIX } from '../../harness/runner.js';
import { GPU_BASH_DIR_PREFIX } from '../gpu-bash.js';

/**
 * A worker killed with SIGKILL cannot remove its jobs' temp folders. The next worker on the host
 * removes those older than any job can run (workers on one host share the temp folder, so a
 * recent folder may belong to a live job of another worker).
 */
export async function sweepStaleJobDirs(maxAgeSeconds: number, dir = os.tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  const now = Date.now();
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith(CANDIDATE_DIR_PREFIX) && !name.startsWith(GPU_BASH_DIR_PREFIX)) continue;
    const full = path.join(dir, name);
    const info = await stat(full).catch(() => undefined);
    if (!info?.isDirectory() || now - info.mtimeMs < maxAgeSeconds * 1000) continue;
    await rm(full, { recursive: true, force: true }).catch(() => undefined);
    removed.push(full);
  }
  return removed;
}
