import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { UserInputError } from '../core/errors.js';
import { MAX_ARCHIVE_BYTES } from './payloads.js';

/** What an archive may expand to: a workspace is a kernel and notes, not a dataset. */
export const MAX_EXTRACTED_BYTES = 256 << 20;

const TAR_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin', LC_ALL: 'C' };

/**
 * Packs a workspace folder as a gzipped tar (the gpu_bash job's snapshot). Refuses, with the size
 * and the cap, an archive that would not fit in a job.
 */
export async function packWorkspace(dir: string, options: { exclude?: string[]; maxBytes?: number } = {}): Promise<Buffer> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'kernelseek-pack-'));
  try {
    const file = path.join(tmp, 'workspace.tar.gz');
    const excludes = (options.exclude ?? ['.git']).map((e) => `--exclude=${e}`);
    await execa('tar', ['-czf', file, ...excludes, '-C', dir, '.'], { env: TAR_ENV, extendEnv: false, stdin: 'ignore' });
    const archive = await readFile(file);
    const max = options.maxBytes ?? MAX_ARCHIVE_BYTES;
    if (archive.length > max) {
      throw new UserInputError(
        `The workspace snapshot is ${(archive.length / 2 ** 20).toFixed(1)} MiB compressed; gpu_bash takes at most ${(max / 2 ** 20).toFixed(0)} MiB. Remove build outputs or large data files from the workspace and try again.`,
        { code: 'archive_too_large' },
      );
    }
    return archive;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Sums the member sizes `tar -tvz` reports (the size is the third column). */
export function sumListedSizes(listing: string): number {
  let total = 0;
  for (const line of listing.split('\n')) {
    const size = Number(line.trim().split(/\s+/)[2]);
    if (Number.isFinite(size)) total += size;
  }
  return total;
}

/**
 * Extracts a snapshot into `dir`. GNU tar already drops leading `/` and refuses `..` members; the
 * expanded size is checked first so a small archive cannot fill the GPU host's disk.
 */
export async function extractArchive(archive: Buffer, dir: string): Promise<void> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'kernelseek-unpack-'));
  try {
    const file = path.join(tmp, 'workspace.tar.gz');
    await writeFile(file, archive);
    const list = await execa('tar', ['-tvzf', file], { env: TAR_ENV, extendEnv: false, reject: false, stdin: 'ignore', maxBuffer: 64 << 20 });
    if (list.exitCode !== 0) {
      throw new UserInputError(`The workspace snapshot is not a gzipped tar archive (${String(list.stderr).trim().split('\n')[0]}).`, { code: 'archive_invalid' });
    }
    // No device node: one extracted by root would be a way into the host's devices (a FIFO is harmless).
    const odd = String(list.stdout).split('\n').find((line) => line.trim() !== '' && !/^[-dlhp]/.test(line));
    if (odd) throw new UserInputError(`The workspace snapshot holds a member that is not a file, folder, link or FIFO (${odd.trim().slice(0, 200)}).`, { code: 'archive_invalid' });
    const expanded = sumListedSizes(String(list.stdout));
    if (expanded > MAX_EXTRACTED_BYTES) {
      throw new UserInputError(`The workspace snapshot expands to ${(expanded / 2 ** 20).toFixed(0)} MiB; at most ${MAX_EXTRACTED_BYTES >> 20} MiB is accepted.`, { code: 'archive_too_large' });
    }
    const r = await execa('tar', ['-xzf', file, '-C', dir, '--no-same-owner', '--no-same-permissions'], { env: TAR_ENV, extendEnv: false, reject: false, stdin: 'ignore' });
    if (r.exitCode !== 0) {
      throw new UserInputError(`The workspace snapshot could not be extracted: ${String(r.stderr).trim().split('\n')[0]}`, { code: 'archive_invalid' });
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
