import { z } from 'zod';
import { candidatePathProblem, isFolderName, KERNEL_FILE_RE, MAX_CANDIDATE_BYTES, MAX_CANDIDATE_FILES } from '../harness/candidate.js';
import { TaskBundleSchema } from './task-bundle.js';

/**
 * Job payloads, validated by the producer before enqueueing and again by the worker (a job may come
 * from an older or a foreign producer). A payload that fails here can never succeed: the worker
 * fails it at once, without retries.
 */

/** Run ids and channel ids go into job ids (`eval:<runId>:<seq>`): no colons. */
const ID_PART = /^[A-Za-z0-9_.-]{1,64}$/;
export const idPart = (what: string) => z.string().regex(ID_PART, { message: `${what} must be 1-64 letters, digits, _ . or - (no colons)` });

/** `cpu`, or a CUDA architecture such as `sm_90`. */
export const ARCH_RE = /^(cpu|sm_\d+a?)$/;
export const ArchSchema = z.string().regex(ARCH_RE, { message: 'arch must be cpu or a CUDA architecture such as sm_90' });

export const MAX_SOURCE_BYTES = 1 << 20;
/** The gpu_bash workspace snapshot, compressed. */
export const MAX_ARCHIVE_BYTES = 8 << 20;

export const EvaluationOptionsSchema = z.strictObject({
  seeds: z.number().int().min(2).max(16).optional(),
  peers: z.boolean().optional(),
  baseline: z.boolean().optional(),
  timeoutSeconds: z.number().positive().optional(),
  callTimeoutSeconds: z.number().positive().max(3600).optional(),
  compileOnly: z.boolean().optional(),
});

const sourceText = (what: string) =>
  z
    .string()
    .min(1, { message: `${what} is empty` })
    .refine((s) => Buffer.byteLength(s) <= MAX_SOURCE_BYTES, { message: `${what} is larger than ${MAX_SOURCE_BYTES >> 10} KiB` });

/** A folder candidate: {path inside the folder: text}, the paths plain and relative (candidate.ts). */
const filesMap = (what: string) =>
  z
    .record(z.string(), z.string())
    .refine((f) => Object.keys(f).length > 0 && Object.keys(f).length <= MAX_CANDIDATE_FILES, { message: `${what} must hold 1 to ${MAX_CANDIDATE_FILES} files` })
    .refine((f) => Object.keys(f).every((p) => candidatePathProblem(p) === undefined), { message: `${what}: every path must be relative, plain names (letters, digits, _ . + -) between slashes, a source or header file` })
    .refine((f) => Object.values(f).reduce((n, t) => n + Buffer.byteLength(t), 0) <= MAX_CANDIDATE_BYTES, { message: `${what} are larger than ${MAX_CANDIDATE_BYTES >> 10} KiB` });

export const EvaluatePayloadSchema = z.strictObject({
  task: z.string().regex(/^[a-z0-9_]+$/, { message: 'task must be a task name (lower-case letters, digits, _)' }),
  /** A one-file candidate's text. */
  source: sourceText('source').optional(),
  /** A folder candidate's files (task.yaml `kernel.file: kernel/`), instead of `source`. */
  files: filesMap('files').optional(),
  fileName: z.string().regex(KERNEL_FILE_RE, { message: 'fileName must be a plain file name ending in .cu, .cpp or .py, or a folder name (kernel/)' }),
  scenarios: z.string().min(1).max(500),
  arch: ArchSchema,
  device: z.enum(['cpu', 'cuda']).optional(),
  runId: idPart('runId').optional(),
  seq: z.number().int().nonnegative().optional(),
  options: EvaluationOptionsSchema.optional(),
  incumbent: sourceText('incumbent').optional(),
  incumbentFiles: filesMap('incumbentFiles').optional(),
  /**
   * The task folder, packed and sealed by the server (src/queue/task-bundle.ts): the worker
   * evaluates against it, not against a copy of its own. Absent from older producers: then the
   * worker's own checkout has to have the task.
   */
  taskBundle: TaskBundleSchema.optional(),
})
  .refine((p) => (p.source === undefined) !== (p.files === undefined), { message: 'give the candidate as source (one file) or files (a folder), exactly one', path: ['source'] })
  .refine((p) => (p.files !== undefined) === isFolderName(p.fileName), { message: 'a folder kernel (fileName kernel/) comes as files, a one-file kernel as source', path: ['fileName'] })
  .refine((p) => p.incumbentFiles === undefined || p.incumbent === undefined, { message: 'give the incumbent as incumbent or incumbentFiles, not both', path: ['incumbent'] });
export type EvaluatePayload = z.infer<typeof EvaluatePayloadSchema>;

export const GpuBashPayloadSchema = z.strictObject({
  runId: idPart('runId'),
  seq: z.number().int().nonnegative(),
  command: z.string().min(1, { message: 'command is empty' }).max(16_384),
  /** The workspace as a base64 gzipped tar archive. */
  archive: z.string().refine((s) => Math.floor((s.length * 3) / 4) <= MAX_ARCHIVE_BYTES + 4, {
    message: `archive is larger than ${MAX_ARCHIVE_BYTES >> 20} MiB`,
  }),
  timeoutSeconds: z.number().positive(),
  arch: ArchSchema,
  outputCapBytes: z.number().int().min(1024).max(1 << 20).optional(),
});
export type GpuBashPayload = z.infer<typeof GpuBashPayloadSchema>;

export const AgentTurnPayloadSchema = z.strictObject({
  runId: idPart('runId'),
  turn: z.number().int().nonnegative(),
});
export type AgentTurnPayload = z.infer<typeof AgentTurnPayloadSchema>;

/**
 * A scheduled digest job. A BullMQ job scheduler's template is fixed, so the day is not in it: the
 * processor derives the window and the day from the time the job was scheduled for.
 */
export const DigestPayloadSchema = z.strictObject({
  channel: z.string().regex(/^[CG][A-Z0-9]{2,}$/, { message: 'channel must be a Slack channel id such as C012AB3CD' }),
});
export type DigestPayload = z.infer<typeof DigestPayloadSchema>;

/** The zod issues of a failed parse as one line a person can act on. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`).join('; ');
}
