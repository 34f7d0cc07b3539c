/**
 * What sealing costs: the worker's sealResult and the dispatcher's openSeal (with the payload
 * digest the dispatcher computes) for evaluation results from a few KiB up to the queue's 512 KiB
 * cap, and for a gpu_bash payload carrying the largest workspace archive (8 MiB). Prints medians
 * and maxima; asserts nothing.
 *
 *   npx tsx bench/result-seal.bench.ts        (BENCH_SEAL_ROUNDS to change the sample count)
 */
import { randomBytes } from 'node:crypto';
import { MAX_ARCHIVE_BYTES } from '../src/queue/payloads.js';
import { resultKeyFromSecret } from '../src/queue/result-key.js';
import { openSeal, payloadDigest, sealResult } from '../src/queue/result-seal.js';
import { MAX_RESULT_BYTES } from '../src/queue/trim.js';

const ROUNDS = Number(process.env.BENCH_SEAL_ROUNDS ?? 30);
const key = resultKeyFromSecret(randomBytes(32).toString('hex'), 'bench');

/** An evaluation outcome of about `bytes` of JSON: scenarios with figures, as the harness writes them. */
function outcomeOfSize(bytes: number) {
  const scenarios = [];
  let i = 0;
  while (JSON.stringify(scenarios).length < bytes) {
    scenarios.push({ id: `b${i}-h16-s${i * 64}`, correct: true, status: 'ok', time_ms: 0.1 + i / 1000, baseline_ms: 0.2, peer_ms: { torch: 0.15 }, params: { b: i, h: 16 }, checks: { max_abs_err: 1e-6, samples: [0.11, 0.12, 0.1] } });
    i++;
  }
  return { status: 'ok', wallSeconds: 12.5, jobId: 'eval:bench:1', worker: 'host/0', gpu: 'NVIDIA H200', result: { status: 'ok', correct: true, summary: { speedup_vs_baseline_geomean: 1.2 }, scenarios, messages: [] } };
}

function stats(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return `median ${median.toFixed(2).padStart(7)} ms   max ${sorted.at(-1)!.toFixed(2).padStart(7)} ms`;
}

function time(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

const payload = { task: 'cpu_softmax', source: 'x'.repeat(64 << 10), fileName: 'kernel.cpp', scenarios: 'all', arch: 'cpu', runId: 'bench', seq: 1 };
console.log(`sealing results (${ROUNDS} rounds each; HMAC-SHA256 over canonical JSON)`);
for (const size of [4 << 10, 64 << 10, MAX_RESULT_BYTES]) {
  const value = outcomeOfSize(size);
  const seal: number[] = [];
  const open: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let sealed: unknown;
    seal.push(time(() => (sealed = JSON.parse(JSON.stringify(sealResult(key, { kind: 'evaluate', jobId: 'eval:bench:1', payload }, value))))));
    open.push(
      time(() => {
        if (!openSeal(key, { kind: 'evaluate', jobId: 'eval:bench:1', payloadDigest: payloadDigest('evaluate', payload) }, sealed).ok) throw new Error('a genuine seal did not open');
      }),
    );
  }
  const kib = (JSON.stringify(value).length / 1024).toFixed(0).padStart(4);
  console.log(`  result ${kib} KiB   worker seals: ${stats(seal)}   dispatcher opens: ${stats(open)}`);
}
const archive = randomBytes(MAX_ARCHIVE_BYTES).toString('base64');
const bash = { runId: 'bench', seq: 1, command: 'nvcc -O3 k.cu && ./a.out', archive, timeoutSeconds: 60, arch: 'cpu' };
const digests: number[] = [];
for (let r = 0; r < ROUNDS; r++) digests.push(time(() => payloadDigest('gpu-bash', bash)));
console.log(`  gpu_bash payload digest, ${(archive.length / 2 ** 20).toFixed(1)} MiB (base64 of an 8 MiB archive): ${stats(digests)}`);
