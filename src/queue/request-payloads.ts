import { UserInputError } from '../core/errors.js';
import type { EvaluationRequest, GpuBashRequest } from './dispatcher.js';
import { MAX_ARCHIVE_BYTES, type EvaluatePayload, type GpuBashPayload } from './payloads.js';

// A dispatcher request as the job payload both dispatchers validate (the BullMQ one sends it to a
// worker, the in-process one checks it the same way): kept apart from the BullMQ dispatcher so that
// `kernelseek run` and `eval` without --remote never load BullMQ.

/** What the worker receives for an evaluation request. */
export function toEvaluatePayload(request: EvaluationRequest): EvaluatePayload {
  return {
    task: request.task,
    ...(request.files ? { files: request.files } : { source: request.source }),
    fileName: request.fileName,
    scenarios: request.scenarios,
    arch: request.arch ?? 'cpu',
    ...(request.device ? { device: request.device } : {}),
    ...(request.runId !== undefined ? { runId: request.runId } : {}),
    ...(request.seq !== undefined ? { seq: request.seq } : {}),
    ...(request.options ? { options: request.options } : {}),
    ...(request.incumbent ? { incumbent: request.incumbent } : {}),
    ...(request.incumbentFiles ? { incumbentFiles: request.incumbentFiles } : {}),
  };
}

export function toGpuBashPayload(request: GpuBashRequest): GpuBashPayload {
  if (request.archive.length > MAX_ARCHIVE_BYTES) {
    throw new UserInputError(
      `The workspace snapshot is ${(request.archive.length / 2 ** 20).toFixed(1)} MiB; gpu_bash takes at most ${MAX_ARCHIVE_BYTES >> 20} MiB. Remove large files from the workspace and try again.`,
      { code: 'archive_too_large' },
    );
  }
  return {
    runId: request.runId,
    seq: request.seq,
    command: request.command,
    archive: request.archive.toString('base64'),
    timeoutSeconds: request.timeoutSeconds,
    arch: request.arch ?? 'cpu',
  };
}
