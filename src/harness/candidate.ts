import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { UserInputError } from '../core/errors.js';
import { expectedSignature } from './c-signature.js';
import type { Task } from './task-schema.js';

export const KERNEL_LANGUAGES = ['cpp', 'cuda', 'triton'] as const;
export type KernelLanguage = (typeof KERNEL_LANGUAGES)[number];

/** A baseline named as a Python callable (`python:ops.py:softmax`) rather than a source file. */
export const PYTHON_BASELINE_PREFIX = 'python:';

/** The language a kernel file implies (task init's default; task.yaml always says it). */
export function defaultLanguage(file: string, device: 'cpu' | 'cuda'): KernelLanguage {
  if (file.endsWith('.py')) return 'triton';
  if (file.endsWith('.cu')) return 'cuda';
  if (/\.(cpp|cc|cxx)$/.test(file)) return 'cpp';
  return device === 'cuda' ? 'cuda' : 'cpp';
}

/** task.yaml's `kernel.include_dirs` (folders of the task) and `kernel.headers` (`cutlass`), [] when absent. */
export function kernelIncludes(task: Pick<Task, 'kernel'>): { includeDirs: string[]; headers: string[] } {
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  return { includeDirs: strings(task.kernel.include_dirs), headers: strings(task.kernel.headers) };
}

/**
 * A candidate is one file or a folder of files (task.yaml `kernel.file`: `kernel.cu`, or `kernel/`):
 * here it is a map {relative path: text}, the same for the harness runner, the job payload, the
 * agent's workspace and the store. A one-file candidate is stored as its text, as it always was; a
 * folder as a small JSON document (encodeCandidate), so every stored source reads back.
 */
export type CandidateFiles = Record<string, string>;

/** Where a task's candidate lives in a workspace, and in which language. */
export interface KernelLayout {
  /** The file's or the folder's name (no trailing `/`). */
  name: string;
  folder: boolean;
  language: KernelLanguage;
}

/** Files a candidate folder (C++ or CUDA) holds: sources and headers, as harness/build/sources.py reads it. */
export const CANDIDATE_EXTENSIONS = ['.cu', '.cpp', '.cc', '.cxx', '.h', '.hh', '.hpp', '.hxx', '.cuh', '.inl', '.ipp', '.inc'] as const;
/** Sources compiled on their own, each to an object (headers are only included). */
export const SOURCE_EXTENSIONS: Record<KernelLanguage, readonly string[]> = { cuda: ['.cu'], cpp: ['.cpp', '.cc', '.cxx'], triton: ['.py'] };
/** The harness's own caps on a folder (harness/build/sources.py). */
export const MAX_CANDIDATE_FILES = 64;
export const MAX_CANDIDATE_BYTES = 4 << 20;
/** task.yaml `kernel.file` as the runner and the job payload take it: a file name, or a folder name ending in `/`. */
export const KERNEL_FILE_RE = /^[A-Za-z0-9_.-]+(\.(cu|cpp|cc|cxx|py)|\/)$/;
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127}$/;
const FOLDER_SCHEMA = 'kernelseek.files/1';

/** A kernel.file ending in `/` is a folder (`kernel/`). */
export function isFolderName(file: string): boolean {
  return file.endsWith('/');
}

export function kernelLayout(task: Pick<Task, 'kernel'>): KernelLayout {
  const folder = isFolderName(task.kernel.file);
  return { name: task.kernel.file.replace(/\/+$/, ''), folder, language: task.kernel.language };
}

export function isPythonBaseline(baseline: string): boolean {
  return baseline.startsWith(PYTHON_BASELINE_PREFIX);
}

/** Why a candidate path is refused, or undefined: relative, plain names, no `.`/`..`, a known extension. */
export function candidatePathProblem(rel: string): string | undefined {
  const parts = rel.split('/');
  if (rel.length > 512 || !parts.every((p) => SEGMENT.test(p) && p !== '.' && p !== '..')) {
    return `${JSON.stringify(rel)} is not a plain relative path (letters, digits, _ . + - between slashes, no . or .. part)`;
  }
  if (!CANDIDATE_EXTENSIONS.some((e) => rel.endsWith(e))) return `${rel} is not a source or header file (${CANDIDATE_EXTENSIONS.join(' ')})`;
  return undefined;
}

/** Checks a files map before it is written anywhere or sent: paths, count, size, at least one source. */
export function checkCandidateFiles(files: CandidateFiles, language: KernelLanguage): void {
  const names = Object.keys(files);
  if (names.length === 0) throw new UserInputError('the candidate folder holds no source or header file', { code: 'kernel_file' });
  if (names.length > MAX_CANDIDATE_FILES) throw new UserInputError(`the candidate has ${names.length} files; at most ${MAX_CANDIDATE_FILES}`, { code: 'kernel_file' });
  for (const name of names) {
    const problem = candidatePathProblem(name);
    if (problem) throw new UserInputError(`candidate file ${problem}`, { code: 'kernel_file' });
  }
  const bytes = names.reduce((n, name) => n + Buffer.byteLength(files[name]!), 0);
  if (bytes > MAX_CANDIDATE_BYTES) throw new UserInputError(`the candidate's files hold ${bytes} bytes; at most ${MAX_CANDIDATE_BYTES >> 10} KiB`, { code: 'kernel_file' });
  if (!names.some((n) => SOURCE_EXTENSIONS[language].some((e) => n.endsWith(e)))) {
    throw new UserInputError(`the candidate folder has no ${language} source (${SOURCE_EXTENSIONS[language].join(' ')}), only ${names.join(', ')}`, { code: 'kernel_file' });
  }
}

/** Stored form: a one-file candidate is its text; a folder, a JSON document naming its files in order. */
export function encodeCandidate(files: CandidateFiles, layout: KernelLayout): string {
  if (!layout.folder) {
    const text = files[layout.name];
    if (text === undefined) throw new Error(`encodeCandidate: no file ${layout.name}`);
    return text;
  }
  const sorted = Object.fromEntries(Object.keys(files).sort().map((k) => [k, files[k]!]));
  return JSON.stringify({ schema: FOLDER_SCHEMA, files: sorted }, null, 1);
}

/** The files of a stored source (see encodeCandidate). Throws when a folder task's source is not a files document. */
export function decodeCandidate(source: string, layout: KernelLayout): CandidateFiles {
  if (!layout.folder) return { [layout.name]: source };
  let doc: unknown;
  try {
    doc = JSON.parse(source);
  } catch {
    throw new Error(`a stored candidate of a folder kernel (${layout.name}/) is not a ${FOLDER_SCHEMA} document`);
  }
  const files = (doc as { schema?: unknown; files?: unknown }).files;
  if ((doc as { schema?: unknown }).schema !== FOLDER_SCHEMA || !files || typeof files !== 'object') {
    throw new Error(`a stored candidate of a folder kernel (${layout.name}/) is not a ${FOLDER_SCHEMA} document`);
  }
  return Object.fromEntries(Object.entries(files as Record<string, unknown>).filter(([, v]) => typeof v === 'string')) as CandidateFiles;
}

/** Reads a file as text; the one place a candidate file is read, so a safer reader can replace it. */
export type ReadText = (file: string) => Promise<string>;
export const readPlainText: ReadText = (file) => readFile(file, 'utf8');

/**
 * A candidate folder's files: every source and header under `dir` (other files, build outputs,
 * hidden folders and symlinks are left out), by path relative to `dir`.
 */
export async function readCandidateFolder(dir: string, readText: ReadText = readPlainText): Promise<CandidateFiles> {
  const out: CandidateFiles = {};
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(path.join(dir, rel), { withFileTypes: true });
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name.startsWith('.') || e.name === '__pycache__') continue;
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(child);
      else if (e.isFile() && CANDIDATE_EXTENSIONS.some((x) => e.name.endsWith(x))) {
        if (Object.keys(out).length >= MAX_CANDIDATE_FILES) throw new UserInputError(`${dir} holds more than ${MAX_CANDIDATE_FILES} source and header files`, { code: 'kernel_file' });
        out[child] = await readText(path.join(dir, child));
      }
    }
  };
  const st = await lstat(dir).catch(() => undefined);
  if (!st) throw new UserInputError(`Kernel folder not found: ${dir}`, { code: 'kernel_file' });
  if (!st.isDirectory()) throw new UserInputError(`${dir} is not a folder`, { code: 'kernel_file' });
  await walk('');
  return out;
}

/**
 * The candidate's files read from where they sit: `location` is the single file, or the folder. The
 * keys are what the harness receives: the file's name for one file, paths inside the folder else.
 */
export async function readCandidate(location: string, layout: KernelLayout, readText: ReadText = readPlainText): Promise<CandidateFiles> {
  if (layout.folder) {
    const files = await readCandidateFolder(location, readText);
    checkCandidateFiles(files, layout.language);
    return files;
  }
  return { [layout.name]: await readText(location) };
}

/**
 * Where a run starts when the baseline is a Python callable (no source to edit): the entry point
 * with the task's signature that reports "not implemented" (non-zero), for the agent to write.
 */
export function starterFiles(task: Pick<Task, 'kernel'>): CandidateFiles {
  const layout = kernelLayout(task);
  const { entry, args } = task.kernel;
  let name: string;
  let text: string;
  if (layout.language === 'triton') {
    const params = args.filter((a) => a.kind !== 'stream').map((a) => a.name);
    name = layout.folder ? 'kernel.py' : layout.name;
    text = `import torch\nimport triton\nimport triton.language as tl\n\n\ndef ${entry}(${params.join(', ')}):\n    # The task's baseline is a Python callable: write the Triton kernel here.\n    raise NotImplementedError\n`;
  } else {
    const includes = layout.language === 'cuda' ? '#include <cstdint>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <cuda_runtime.h>\n' : '#include <cstdint>\n';
    name = layout.folder ? (layout.language === 'cuda' ? 'kernel.cu' : 'kernel.cpp') : layout.name;
    text = `${includes}\n// The task's baseline is a Python callable: write the kernel here. Non-zero means "not supported".\n${expectedSignature(entry, args)} {\n  return 1;\n}\n`;
  }
  return { [name]: text };
}

/** A candidate as the model reads it: the one file's text, or each file of the folder under its path. */
export function formatCandidate(source: string, layout: KernelLayout): string {
  if (!layout.folder) return source;
  let files: CandidateFiles;
  try {
    files = decodeCandidate(source, layout);
  } catch {
    return source;
  }
  return Object.entries(files)
    .map(([rel, text]) => `// ==== ${layout.name}/${rel} ====\n${text}`)
    .join('\n');
}
