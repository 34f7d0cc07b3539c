import { realpathSync, statfsSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';

// Kernel pseudo-filesystems (statfs f_type): nothing can be stored there, and the embedded database
// does not fail cleanly on them (under /proc it spins for minutes), so they are refused up front.
const PSEUDO_FS = new Map<number, string>([
  [0x9fa0, 'procfs'],
  [0x62656572, 'sysfs'],
  [0x1cd1, 'devpts'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0xcafe4a11, 'bpf'],
]);
// /dev is devtmpfs, which statfs cannot tell from an ordinary tmpfs: refused by name.
const PSEUDO_ROOTS = ['/proc', '/sys', '/dev'];

/** The entry at `p`, or undefined where there is none (ENOTDIR: a file stands where a folder would). */
function lookAt(p: string): Stats | undefined {
  try {
    return statSync(p);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/**
 * Why `dir` cannot hold KernelSeek's local state, or undefined when it can (it need not exist yet:
 * it is created on first use). Only looks, never creates. Permissions are left to the first write,
 * whose error names the path.
 */
export function dataDirProblem(dir: string): string | undefined {
  let existing = path.resolve(dir);
  let info = lookAt(existing);
  while (!info && path.dirname(existing) !== existing) {
    existing = path.dirname(existing);
    info = lookAt(existing);
  }
  if (!info) return undefined;
  if (!info.isDirectory()) {
    return existing === path.resolve(dir)
      ? `${dir} is a file, not a folder: point it at a folder (it is created if missing), e.g. ./.kernelseek`
      : `${dir} is under ${existing}, which is a file, not a folder: point it at a folder (it is created if missing), e.g. ./.kernelseek`;
  }
  const real = realpathSync(existing);
  const root = PSEUDO_ROOTS.find((r) => real === r || real.startsWith(`${r}/`));
  let fsType: string | undefined;
  try {
    fsType = PSEUDO_FS.get(statfsSync(real).type);
  } catch {
    fsType = undefined;
  }
  if (root || fsType) {
    return `${dir} is on ${fsType ?? root}, a kernel pseudo-filesystem that cannot store files: point it at a folder on a disk, e.g. ./.kernelseek`;
  }
  return undefined;
}
