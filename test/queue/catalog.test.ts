import { describe, expect, it } from 'vitest';
import { JOB_KINDS, jobIdFor, jobOptionsFor, queueNameFor } from '../../src/queue/catalog.js';
import type { EvaluationOutcome } from '../../src/harness/evaluation.js';
import { parseNvidiaSmi } from '../../src/queue/gpus.js';
import { EvaluatePayloadSchema, GpuBashPayloadSchema, describeIssues, type EvaluatePayload } from '../../src/queue/payloads.js';
import { trimOutcome } from '../../src/queue/trim.js';
import type { EvalResult } from '../../src/harness/result.js';

const payload = (over: Partial<EvaluatePayload> = {}): EvaluatePayload => ({
  task: 'cpu_softmax',
  source: 'extern "C" int softmax_rows() { return 0; }',
  fileName: 'kernel.cpp',
  scenarios: 'quick',
  arch: 'cpu',
  ...over,
});

describe('queue catalog', () => {
  it('names a queue per architecture for evaluations and gpu_bash, one queue for the others', () => {
    expect(queueNameFor('evaluate', 'sm_90')).toBe('eval-sm_90');
    expect(queueNameFor('evaluate', 'cpu')).toBe('eval-cpu');
    // Per-arch kinds go to a queue per harness version; the others have one queue whatever it is.
    expect(queueNameFor('evaluate', 'sm_90', '3f2a9c01b7de')).toBe('eval-sm_90@3f2a9c01b7de');
    expect(queueNameFor('gpu-bash', 'cpu', '3f2a9c01b7de')).toBe('gpu-bash-cpu@3f2a9c01b7de');
    expect(queueNameFor('agent-turn', undefined, '3f2a9c01b7de')).toBe('agent-turn');
    expect(queueNameFor('gpu-bash', 'sm_90')).toBe('gpu-bash-sm_90');
    expect(queueNameFor('agent-turn')).toBe('agent-turn');
    expect(queueNameFor('digest')).toBe('digest');
    expect(() => queueNameFor('evaluate')).toThrow(/per architecture/);
  });

  it('gives deterministic job ids: run and sequence number, or the content of an ad-hoc evaluation', () => {
    expect(jobIdFor('evaluate', payload({ runId: 'ks-abc23456', seq: 7 }))).toBe('eval:ks-abc23456:7');
    expect(jobIdFor('gpu-bash', { runId: 'ks-a', seq: 2, command: 'ls', archive: '', timeoutSeconds: 5, arch: 'cpu' })).toBe('bash:ks-a:2');
    expect(jobIdFor('agent-turn', { runId: 'ks-a', turn: 3 })).toBe('turn:ks-a:3');
    // A digest job's id is its channel's scheduler id (BullMQ names the jobs `repeat:<id>:<time>`).
    expect(jobIdFor('digest', { channel: 'C0123' })).toBe('digest-C0123');
    const a = jobIdFor('evaluate', payload());
    expect(jobIdFor('evaluate', payload())).toBe(a);
    expect(jobIdFor('evaluate', payload({ source: 'other' }))).not.toBe(a);
    expect(jobIdFor('evaluate', payload({ scenarios: 'all' }))).not.toBe(a);
    expect(jobIdFor('evaluate', payload({ options: { peers: false } }))).not.toBe(a);
    // BullMQ accepts custom ids with colons only when they have exactly three parts.
    for (const id of [a, 'eval:ks-abc23456:7', 'bash:ks-a:2', 'turn:ks-a:3']) expect(id.split(':')).toHaveLength(3);
  });

  it('carries attempts, backoff and retention into the job options', () => {
    const o = jobOptionsFor('evaluate', payload({ runId: 'r', seq: 1 }));
    expect(o).toMatchObject({ jobId: 'eval:r:1', attempts: JOB_KINDS.evaluate.attempts, backoff: JOB_KINDS.evaluate.backoff });
    expect(o.removeOnComplete.age).toBe(JOB_KINDS.evaluate.keepCompletedSeconds);
  });

  it('rejects malformed payloads with words a person can act on', () => {
    const bad = EvaluatePayloadSchema.safeParse({ ...payload(), task: 'Flash Attn', fileName: '../k.cu', arch: 'hopper', runId: 'a:b' });
    expect(bad.success).toBe(false);
    const text = describeIssues(bad.error!);
    expect(text).toMatch(/task: task must be a task name/);
    expect(text).toMatch(/fileName: fileName must be a plain file name/);
    expect(text).toMatch(/arch: arch must be cpu or a CUDA architecture/);
    expect(text).toMatch(/runId: runId must be .* \(no colons\)/);
    expect(EvaluatePayloadSchema.safeParse({ ...payload(), extra: 1 }).success).toBe(false);
    expect(EvaluatePayloadSchema.safeParse({ ...payload(), source: 'x'.repeat((1 << 20) + 1) }).success).toBe(false);
    // The run's best, timed beside the candidate: the same limits as the source.
    expect(EvaluatePayloadSchema.safeParse({ ...payload(), incumbent: payload().source }).success).toBe(true);
    expect(describeIssues(EvaluatePayloadSchema.safeParse({ ...payload(), incumbent: 'x'.repeat((1 << 20) + 1) }).error!)).toMatch(/incumbent: incumbent is larger than/);
    expect(EvaluatePayloadSchema.safeParse({ ...payload(), incumbent: '' }).success).toBe(false);
    const big = GpuBashPayloadSchema.safeParse({ runId: 'r', seq: 1, command: 'ls', archive: 'A'.repeat(12 << 20), timeoutSeconds: 5, arch: 'sm_90' });
    expect(describeIssues(big.error!)).toMatch(/archive is larger than 8 MiB/);
  });
});

describe('parseNvidiaSmi', () => {
  it('reads index, name, driver, memory and compute capability', () => {
    const gpus = parseNvidiaSmi('0, NVIDIA H200, 570.133.20, 143771, 9.0\n1, NVIDIA H200, 570.133.20, 143771, 9.0\n');
    expect(gpus).toEqual([
      { index: 0, name: 'NVIDIA H200', driver: '570.133.20', memoryMiB: 143771, arch: 'sm_90' },
      { index: 1, name: 'NVIDIA H200', driver: '570.133.20', memoryMiB: 143771, arch: 'sm_90' },
    ]);
    expect(parseNvidiaSmi('0, Tesla T4, 470.1, 15109\n')[0]!.arch).toBeNull();
    expect(parseNvidiaSmi('3, NVIDIA B200, 580.1, 183359, 10.0')[0]!.arch).toBe('sm_100');
    expect(() => parseNvidiaSmi('No devices were found')).toThrow(/unexpected nvidia-smi line/);
  });
});

describe('trimOutcome', () => {
  const result = (scenarios: number, logBytes: number): EvalResult => ({
    schema: 'kernelseek.eval/1',
    task: 't',
    device: 'cuda',
    gpu: 'NVIDIA H200',
    arch: 'sm_90',
    status: 'incorrect',
    correct: false,
    summary: { scenarios, correct: 0, speedup_vs_baseline_geomean: null, speedup_vs_peer_geomean: {}, best_peer: null, pct_of_peak_median: null, seconds: 1 },
    scenarios: Array.from({ length: scenarios }, (_, i) => ({
      id: `s${i}`,
      params: { i },
      correct: false,
      reason: 'r'.repeat(2000),
      checks: Array.from({ length: 20 }, () => ({ seed: 1, max_abs_err: 1, tolerance: 1, output: 'y'.repeat(50) })),
    })),
    compile: { seconds: 1, log: 'L'.repeat(logBytes) },
    messages: ['m'],
  });
  const outcome = (r: EvalResult): EvaluationOutcome => ({ status: r.status, result: r, wallSeconds: 1, jobId: 'j', worker: 'w', gpu: null });

  it('leaves a result under the cap alone', () => {
    const o = outcome(result(3, 100));
    expect(trimOutcome(o)).toBe(o);
  });

  it('keeps every scenario with its verdict and cuts logs and details, saying so in messages', () => {
    const o = outcome(result(200, 2 << 20));
    const t = trimOutcome(o, 256 * 1024);
    if (t.status === 'harness_error') throw new Error('unexpected');
    expect(Buffer.byteLength(JSON.stringify(t))).toBeLessThanOrEqual(256 * 1024);
    expect(t.result.scenarios).toHaveLength(200);
    expect(t.result.scenarios[199]).toMatchObject({ id: 's199', correct: false });
    expect(t.result.compile.log.length).toBeLessThan(10_000);
    expect(t.trimmed).toMatch(/compile log cut/);
    expect(t.result.messages.at(-1)).toMatch(/result trimmed from \d+ KiB to fit the queue's 256 KiB limit/);
    // The original is not modified (the worker may still log it).
    expect(o.status !== 'harness_error' && o.result.compile.log.length).toBe(2 << 20);
  });
});

describe('queue configuration', () => {
  it('defaults to the kernelseek prefix and a 10 s lock, 5 s stalled check, 60 s grace', async () => {
    const { loadConfig } = await import('../../src/config/index.js');
    expect(loadConfig({}).queue).toEqual({ prefix: 'kernelseek', lockSeconds: 10, stalledCheckSeconds: 5, graceSeconds: 60 });
    expect(loadConfig({ KERNELSEEK_WORKER_LOCK: '30s', KERNELSEEK_QUEUE_PREFIX: 'ks-staging' }).queue).toMatchObject({ prefix: 'ks-staging', lockSeconds: 30 });
    expect(() => loadConfig({ KERNELSEEK_QUEUE_PREFIX: 'a:b', KERNELSEEK_WORKER_GRACE: 'forever' })).toThrow(
      /KERNELSEEK_QUEUE_PREFIX: must be letters, digits, _ \. or - \(no colons\)[\s\S]*KERNELSEEK_WORKER_GRACE: must be a duration such as 90s, 10m or 2h/,
    );
  });
});
