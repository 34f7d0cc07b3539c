import { WaitingError } from 'bullmq';
import type { Config, Env } from '../../config/index.js';
import { NonRetryableError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { runHarness } from '../../harness/runner.js';
import { findTask } from '../../harness/tasks.js';
import { JOB_KINDS } from '../catalog.js';
import type { EvaluationOutcome, ExecutorInfo } from '../../harness/evaluation.js';
import type { GpuBashResult } from '../dispatcher.js';
import { runGpuBash } from '../gpu-bash.js';
import type { KindProcessor, ProcessorContext } from '../kind-worker.js';
import type { ResultKey } from '../result-key.js';
import { unpackTask } from '../task-bundle.js';
import { trimOutcome } from '../trim.js';
import type { SlotLock } from './slot-lock.js';

/** One GPU (or one CPU slot) of a worker host and what is needed to run jobs on it. */
export interface Slot {
  gpuIndex: number | null;
  gpuName: string | null;
  lock: SlotLock;
  executor: ExecutorInfo;
  /** The job running on the slot now (for the heartbeat). */
  activeJob: string | null;
  /** Called when `activeJob` changes. */
  onChange?: () => void;
}

export interface ProcessorDeps {
  config: Config;
  env: Env;
  logger: Logger;
  /** Checks the seal of the tasks that come with jobs (the same key results are sealed with). */
  resultKey: ResultKey;
  /** Where tasks that come with jobs are written out. */
  taskRoot: string;
}

function slotLabel(slot: Slot): string {
  return `${slot.executor.host}/${slot.gpuIndex ?? 'cpu'}`;
}

/**
 * The job was cut short by the worker's shutdown: put it back in the queue for another worker
 * (BullMQ's WaitingError tells the worker the job was moved on purpose, not failed).
 */
async function releaseJob(ctx: ProcessorContext): Promise<never> {
  await ctx.job.moveToWait(ctx.token);
  throw new WaitingError();
}

async function onSlot<T>(slot: Slot, jobId: string | undefined, fn: () => Promise<T>): Promise<T> {
  return slot.lock.run(async () => {
    slot.activeJob = jobId ?? null;
    slot.onChange?.();
    try {
      return await fn();
    } finally {
      slot.activeJob = null;
      slot.onChange?.();
    }
  });
}

export function createEvaluateProcessor(deps: ProcessorDeps, slot: Slot): KindProcessor<'evaluate', EvaluationOutcome> {
  return async (payload, ctx) => {
    // The task comes with the job, sealed by the server and checked here; a job from an older
    // producer names it, and this host's own checkout must have it. An unknown one can never
    // succeed here.
    const tasksDir = payload.taskBundle ? await unpackTask(payload.taskBundle, payload.task, deps.resultKey, deps.taskRoot) : deps.config.core.tasksDir;
    const config = tasksDir === deps.config.core.tasksDir ? deps.config : { ...deps.config, core: { ...deps.config.core, tasksDir } };
    const { task } = await findTask(tasksDir, payload.task);
    if (task.device === 'cuda' && slot.gpuIndex === null) {
      throw new NonRetryableError('wrong_pool', `Task ${task.name} needs a CUDA GPU, but job ${ctx.job.id} reached a CPU worker (queue ${ctx.job.queueName}).`);
    }
    if (task.device === 'cuda' && !task.architectures.includes(payload.arch)) {
      throw new NonRetryableError('wrong_arch', `Task ${task.name} supports ${task.architectures.join(', ')}, not ${payload.arch}.`);
    }
    const limit = JOB_KINDS.evaluate.timeoutSeconds;
    const timeoutSeconds = Math.min(payload.options?.timeoutSeconds ?? limit, limit);
    const outcome = await onSlot(slot, ctx.job.id, () => {
      deps.logger.info({ jobId: ctx.job.id, task: payload.task, taskDigest: payload.taskBundle?.digest.slice(0, 16) ?? 'local', scenarios: payload.scenarios, gpu: slot.gpuIndex }, 'evaluation started');
      return runHarness(
        { task: payload.task, source: payload.source, files: payload.files, fileName: payload.fileName, scenarios: payload.scenarios, device: payload.device, options: { ...payload.options, timeoutSeconds }, incumbent: payload.incumbent, incumbentFiles: payload.incumbentFiles },
        {
          config,
          env: deps.env,
          gpuIndex: slot.gpuIndex,
          signal: ctx.signal,
          onSpawn: (pid) => deps.logger.info({ jobId: ctx.job.id, harnessPid: pid }, 'harness started'),
          onProgress: (p) => {
            ctx.job.updateProgress({ ...p }).catch((e: unknown) => deps.logger.warn({ err: e }, 'progress not recorded'));
          },
        },
      );
    });
    if (ctx.shutdownSignal?.aborted && outcome.status === 'harness_error') {
      deps.logger.warn({ jobId: ctx.job.id }, 'shutting down: job handed back to the queue');
      return releaseJob(ctx);
    }
    deps.logger.info({ jobId: ctx.job.id, status: outcome.status, seconds: outcome.wallSeconds }, 'evaluation finished');
    const withExecutor = outcome.status === 'harness_error' ? outcome : { ...outcome, result: { ...outcome.result, executor: slot.executor } };
    return trimOutcome({ ...withExecutor, jobId: String(ctx.job.id), worker: slotLabel(slot), gpu: slot.gpuName, executor: slot.executor });
  };
}

export function createGpuBashProcessor(deps: ProcessorDeps, slot: Slot): KindProcessor<'gpu-bash', GpuBashResult> {
  return async (payload, ctx) => {
    const limit = JOB_KINDS['gpu-bash'].timeoutSeconds;
    const r = await onSlot(slot, ctx.job.id, () =>
      runGpuBash(
        {
          command: payload.command,
          archive: Buffer.from(payload.archive, 'base64'),
          timeoutSeconds: Math.min(payload.timeoutSeconds, limit),
          outputCapBytes: payload.outputCapBytes,
          gpuIndex: slot.gpuIndex,
          signal: ctx.signal,
        },
        deps.env,
        deps.config,
      ),
    );
    // Killed by the shutdown (not by its own time limit): another worker runs it from the start.
    if (ctx.shutdownSignal?.aborted && r.exitCode === null && !r.timedOut) return releaseJob(ctx);
    return { ...r, worker: slotLabel(slot), gpu: slot.gpuName };
  };
}
