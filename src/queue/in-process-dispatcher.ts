import os from 'node:os';
import type { Config, Env } from '../config/index.js';
import { runHarness, harnessEnvironment } from '../harness/runner.js';
import { resolvePython } from '../harness/runner-python.js';
import { findTask } from '../harness/tasks.js';
import { jobIdFor } from './catalog.js';
import { toEvaluatePayload, toGpuBashPayload } from './request-payloads.js';
import type { EvaluationOutcome, ExecutorInfo } from '../harness/evaluation.js';
import type { DispatchOptions, Dispatcher, EvaluationRequest, GpuBashRequest, GpuBashResult } from './dispatcher.js';
import { runGpuBash } from './gpu-bash.js';
import { EvaluatePayloadSchema, GpuBashPayloadSchema, describeIssues } from './payloads.js';
import { UserInputError } from '../core/errors.js';
import { createSlotLock, type SlotLock } from './worker/slot-lock.js';

export interface InProcessDispatcherOptions {
  /** The environment of this process; the harness sees only an allowlist of it. */
  env: Env;
}

/**
 * The dispatcher for `kernelseek run` and `kernelseek eval` without `--remote`: the harness runs in
 * this process's children, no Redis involved. Work is serialised per device, as a GPU worker does,
 * so two evaluations never time against each other.
 */
export function createInProcessDispatcher(config: Config, options: InProcessDispatcherOptions): Dispatcher {
  const locks = new Map<string, SlotLock>();
  const lockFor = (device: string) => {
    let lock = locks.get(device);
    if (!lock) locks.set(device, (lock = createSlotLock()));
    return lock;
  };
  const host = os.hostname();
  const label = `${host}/local`;
  const controllers = new Set<AbortController>();

  /** Aborts when the caller's signal does or when the dispatcher closes. */
  const linked = (signal?: AbortSignal) => {
    const controller = new AbortController();
    controllers.add(controller);
    signal?.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
    return controller;
  };

  return {
    async evaluate(request: EvaluationRequest, dispatch: DispatchOptions = {}): Promise<EvaluationOutcome> {
      const parsed = EvaluatePayloadSchema.safeParse(toEvaluatePayload(request));
      if (!parsed.success) throw new UserInputError(`Invalid evaluation: ${describeIssues(parsed.error)}`, { code: 'job_invalid' });
      const { task } = await findTask(config.core.tasksDir, request.task);
      const controller = linked(dispatch.signal);
      try {
        const outcome = await lockFor(request.device ?? task.device).run(() =>
          runHarness(
            { task: request.task, source: request.source, files: request.files, fileName: request.fileName, scenarios: request.scenarios, device: request.device, options: request.options, incumbent: request.incumbent, incumbentFiles: request.incumbentFiles },
            { config, env: options.env, signal: controller.signal, onProgress: dispatch.onProgress },
          ),
        );
        const python = await resolvePython(config.harness.python, harnessEnvironment(options.env, config)).catch(() => undefined);
        const result = outcome.status === 'harness_error' ? undefined : outcome.result;
        const executor: ExecutorInfo = {
          host,
          gpuIndex: null,
          gpuName: result?.gpu ?? null,
          driver: typeof result?.device_info === 'object' && result.device_info !== null ? String((result.device_info as Record<string, unknown>).driver ?? '') || null : null,
          harnessVersion: typeof result?.harness_version === 'string' ? result.harness_version : null,
          python: python?.path ?? null,
          torch: python?.torchVersion ?? null,
        };
        return { ...outcome, jobId: jobIdFor('evaluate', parsed.data), worker: label, gpu: result?.gpu ?? null, executor };
      } finally {
        controllers.delete(controller);
      }
    },
    async gpuBash(request: GpuBashRequest, dispatch: DispatchOptions = {}): Promise<GpuBashResult> {
      const parsed = GpuBashPayloadSchema.safeParse(toGpuBashPayload(request));
      if (!parsed.success) throw new UserInputError(`Invalid gpu_bash request: ${describeIssues(parsed.error)}`, { code: 'job_invalid' });
      const controller = linked(dispatch.signal);
      try {
        const device = (request.arch ?? 'cpu') === 'cpu' ? 'cpu' : 'cuda';
        const r = await lockFor(device).run(() =>
          runGpuBash({ command: request.command, archive: request.archive, timeoutSeconds: request.timeoutSeconds, gpuIndex: null, signal: controller.signal }, options.env, config),
        );
        return { ...r, worker: label, gpu: null };
      } finally {
        controllers.delete(controller);
      }
    },
    async close() {
      for (const c of controllers) c.abort(new Error('the dispatcher was closed'));
      controllers.clear();
    },
  };
}
