import { lstat, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UserInputError } from '../core/errors.js';
import { exportFileNames, type RunExport } from './export-run.js';
import { checkRelativePath } from './kernel-files.js';

/**
 * Writes an export folder: `kernel/` (every file of the kernel), `<run>-eval<n>.patch` (the diff
 * against the baseline), `evidence.json`, `evidence.md` and `speedups.png`. Nothing is overwritten
 * without `force`: a folder that already holds any of these files is refused, whole, before anything
 * is written. Returns the paths written.
 */
export async function writeExportDir(exp: RunExport, dir: string, options: { force?: boolean } = {}): Promise<string[]> {
  const names = exportFileNames(exp);
  const files: [string, string | Buffer | (() => Promise<Buffer>)][] = [
    ...exp.candidate.map((f): [string, string] => [path.join(names.kernelDir, checkRelativePath(f.path, 'a kernel file')), f.content]),
    [names.patch, exp.diff.patch],
    [names.json, `${JSON.stringify(exp.evidence, null, 2)}\n`],
    [names.markdown, exp.markdown],
    [names.chart, exp.chart],
  ];
  const st = await lstat(dir).catch(() => undefined);
  if (st && !st.isDirectory()) throw new UserInputError(`--out ${dir} is not a folder: give a folder to write the export into.`, { code: 'export_out' });
  if (!options.force) {
    const present: string[] = [];
    for (const [name] of files) if (await lstat(path.join(dir, name)).catch(() => undefined)) present.push(name);
    if (present.length > 0) {
      throw new UserInputError(`${dir} already holds ${present.join(', ')}: give another --out folder, or --force to overwrite them.`, { code: 'export_exists' });
    }
  }
  const written: string[] = [];
  for (const [name, content] of files) {
    const file = path.join(dir, name);
    await mkdir(path.dirname(file), { recursive: true });
    // A link planted where a file goes would write elsewhere: replace what is there, never follow it.
    const existing = await lstat(file).catch(() => undefined);
    if (existing?.isSymbolicLink() || (existing && !existing.isFile())) throw new UserInputError(`${file} is not a plain file; remove it or choose another --out folder.`, { code: 'export_exists' });
    await writeFile(file, typeof content === 'function' ? await content() : content);
    written.push(file);
  }
  return written;
}
