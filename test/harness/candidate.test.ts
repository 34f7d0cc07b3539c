import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCandidate, encodeCandidate, readCandidateFolder, type KernelLayout } from '../../src/harness/candidate.js';
import { validateRunRequest } from '../../src/harness/runner.js';
import { EvaluatePayloadSchema } from '../../src/queue/payloads.js';
import { toEvaluatePayload } from '../../src/queue/request-payloads.js';
import { createTempDir } from '../support/db.js';

/**
 * A folder candidate travels as {path: text} from the workspace to the job payload to the folder the
 * harness reads. Each hop refuses a path that would land outside that folder, and the workspace
 * read takes sources and headers only, never what a link points at.
 */

const FOLDER: KernelLayout = { name: 'kernel', folder: true, language: 'cuda' };
const base = { task: 'gemm_cute', fileName: 'kernel/', scenarios: 'quick', arch: 'sm_90' };

let tmp: Awaited<ReturnType<typeof createTempDir>>;
beforeAll(async () => {
  tmp = await createTempDir('ks-candidate-');
});
afterAll(() => tmp.remove());

describe('folder candidates', () => {
  it('a job whose files would be written outside the candidate folder is refused, as is a mixed or oversized one', () => {
    const ok = EvaluatePayloadSchema.safeParse({ ...base, files: { 'gemm.cu': '//', 'detail/tile.cuh': '//' } });
    expect(ok.success).toBe(true);
    const refused: [string, Record<string, unknown>][] = [
      ['parent folder', { files: { '../../../../home/x/.bashrc.h': 'x' } }],
      ['absolute path', { files: { '/etc/cron.d/x.h': 'x' } }],
      ['hidden part', { files: { '.git/hooks/pre-commit.h': 'x' } }],
      ['not a source', { files: { 'gemm.cu': '//', 'run.sh': 'rm -rf /' } }],
      ['empty map', { files: {} }],
      ['both source and files', { source: '//', files: { 'gemm.cu': '//' } }],
      ['a folder kernel sent as one source', { source: '//' }],
      ['too many files', { files: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`f${i}.cuh`, '//'])) }],
    ];
    for (const [what, patch] of refused) expect(EvaluatePayloadSchema.safeParse({ ...base, ...patch }).success, what).toBe(false);
    // One file stays one source; files for a one-file kernel are refused.
    expect(EvaluatePayloadSchema.safeParse({ ...base, fileName: 'kernel.cu', source: '//' }).success).toBe(true);
    expect(EvaluatePayloadSchema.safeParse({ ...base, fileName: 'kernel.cu', files: { 'kernel.cu': '//' } }).success).toBe(false);
    // What the dispatcher builds from a request is what the schema takes.
    expect(EvaluatePayloadSchema.safeParse(toEvaluatePayload({ task: 'gemm_cute', fileName: 'kernel/', files: { 'gemm.cu': '//' }, scenarios: 'quick', arch: 'sm_90' })).success).toBe(true);
  });

  it('the runner refuses such a request before it writes a file', () => {
    expect(() => validateRunRequest({ task: 't', fileName: 'kernel/', files: { '../escape.h': 'x' }, scenarios: 'all' })).toThrow(/not a plain relative path/);
    expect(() => validateRunRequest({ task: 't', fileName: 'kernel/', source: 'x', scenarios: 'all' })).toThrow(/must come as a files map/);
    expect(() => validateRunRequest({ task: 't', fileName: 'kernel/', files: { 'a.h': 'x' }, scenarios: 'all' })).toThrow(/no cpp source/);
    expect(() => validateRunRequest({ task: 't', fileName: 'kernel/', files: { 'a.cpp': 'x' }, incumbentFiles: { 'sub/../../b.cpp': 'x' }, scenarios: 'all' })).toThrow(/not a plain relative path/);
    expect(() => validateRunRequest({ task: 't', fileName: 'kernel.py', source: 'def f(): pass', scenarios: 'all' })).not.toThrow();
  });

  it('reads sources and headers only, leaving out links, hidden folders and other files', async () => {
    const dir = path.join(tmp.dir, 'kernel');
    await mkdir(path.join(dir, 'detail'), { recursive: true });
    await mkdir(path.join(dir, '.cache'), { recursive: true });
    await writeFile(path.join(dir, 'gemm.cu'), '#include "detail/tile.cuh"\n');
    await writeFile(path.join(dir, 'detail', 'tile.cuh'), '// tile\n');
    await writeFile(path.join(dir, '.cache', 'old.cuh'), '// stale\n');
    await writeFile(path.join(dir, 'gemm.o'), 'binary');
    await writeFile(path.join(tmp.dir, 'secret.h'), 'SECRET');
    await symlink(path.join(tmp.dir, 'secret.h'), path.join(dir, 'leak.h'));
    const files = await readCandidateFolder(dir);
    expect(files).toEqual({ 'detail/tile.cuh': '// tile\n', 'gemm.cu': '#include "detail/tile.cuh"\n' });
    // A link in place of the folder itself is not followed either.
    await symlink(dir, path.join(tmp.dir, 'linked'));
    await expect(readCandidateFolder(path.join(tmp.dir, 'linked'))).rejects.toThrow(/is not a folder/);
  });

  it('stores a folder as one document that reads back to the same files, and a file as its text', () => {
    const files = { 'b.cuh': 'B', 'a.cu': 'A' };
    const stored = encodeCandidate(files, FOLDER);
    expect(JSON.parse(stored)).toEqual({ schema: 'kernelseek.files/1', files: { 'a.cu': 'A', 'b.cuh': 'B' } });
    expect(decodeCandidate(stored, FOLDER)).toEqual(files);
    expect(() => decodeCandidate('__global__ void k() {}', FOLDER)).toThrow(/not a kernelseek\.files\/1 document/);
    const single: KernelLayout = { name: 'kernel.cu', folder: false, language: 'cuda' };
    expect(encodeCandidate({ 'kernel.cu': 'X' }, single)).toBe('X');
    expect(decodeCandidate('X', single)).toEqual({ 'kernel.cu': 'X' });
  });
});
