/**
 * Distributed work: the job catalog, producers, the two dispatchers (BullMQ for `serve` and
 * `--remote`, in-process for `run` and `eval`), the GPU worker and queue statistics.
 */
export type * from './dispatcher.js';
export { JOB_KINDS, JOB_KIND_NAMES, jobIdFor, jobOptionsFor, kindOptionsFor, queueNameFor, splitQueueName, type JobKind, type PayloadOf } from './catalog.js';
export * from './payloads.js';
export { checkRedis, redisOptionsFromUrl } from './connection.js';
export { createQueueClient, type QueueClient, type EnqueuedJob } from './producer.js';
export { createKindWorker, type KindProcessor, type KindWorkerOptions, type ProcessorContext } from './kind-worker.js';
export { createBullmqDispatcher, MAX_KEY_MISMATCHES, MAX_REFUSED_RESULTS, type BullmqDispatcher, type BullmqDispatcherOptions } from './bullmq-dispatcher.js';
export { loadResultKey, resultKeyFile, resultKeyFromSecret, type ResultKey } from './result-key.js';
export { sealResult, openSeal, payloadDigest, canonicalJson, type ResultSeal } from './result-seal.js';
export { createInProcessDispatcher } from './in-process-dispatcher.js';
export { startGpuWorker, type GpuWorkerHandle, type GpuWorkerOptions } from './worker/gpu-worker.js';
export { runGpuBash } from './gpu-bash.js';
export { packWorkspace, extractArchive } from './archive.js';
export { listWorkers, type WorkerHeartbeat } from './heartbeat.js';
export { collectQueuesReport, type QueuesReport } from './stats.js';
export { trimOutcome, MAX_RESULT_BYTES } from './trim.js';
export { detectGpus, parseNvidiaSmi, type GpuInfo } from './gpus.js';
export { computeHarnessVersion, type HarnessVersion } from './harness-version.js';
export { packTask, unpackTask, readTaskFolder, digestTaskFiles, type TaskBundle } from './task-bundle.js';
export { matchWorkers, describeOtherHarness, type WorkerMatch } from './worker-match.js';
