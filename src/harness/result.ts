import { z } from 'zod';

/**
 * The harness's result, schema `kernelseek.eval/1` (DESIGN §5). Fields may be added by the harness;
 * none of those below may change meaning. Unknown fields are kept.
 */
export const EVAL_STATUSES = ['ok', 'compile_error', 'runtime_error', 'timeout', 'incorrect', 'rejected'] as const;
export type EvalStatus = (typeof EVAL_STATUSES)[number];

const nullableNumber = z.number().nullable();
/** A 95 % interval [lo, hi] of a speedup, from the paired per-round ratios; null when too few rounds. */
const interval = z.tuple([z.number(), z.number()]).nullable();
/** faster | slower only when the interval excludes 1.0 by 1 % on its side (harness/timing/stats.py VERDICT_MARGIN); same otherwise; null without an interval. */
export const VERDICTS = ['faster', 'slower', 'same'] as const;
export type Verdict = (typeof VERDICTS)[number];
const verdict = z.enum(VERDICTS).nullable();

export const ScenarioResultSchema = z
  .object({
    id: z.string(),
    params: z.record(z.string(), z.unknown()),
    correct: z.boolean(),
    max_abs_err: nullableNumber.optional(),
    tolerance: nullableNumber.optional(),
    time_ms: nullableNumber.optional(),
    baseline_ms: nullableNumber.optional(),
    peer_ms: z.record(z.string(), nullableNumber).optional(),
    tflops: nullableNumber.optional(),
    pct_of_peak: nullableNumber.optional(),
    speedup_vs_baseline_ci: interval.optional(),
    speedup_vs_peer_ci: z.record(z.string(), interval).optional(),
    verdict_vs_baseline: verdict.optional(),
    verdict_vs_peer: z.record(z.string(), verdict).optional(),
    speedup_vs_incumbent: nullableNumber.optional(),
    speedup_vs_incumbent_ci: interval.optional(),
    verdict_vs_incumbent: verdict.optional(),
    reason: z.string().nullable().optional(),
  })
  .loose();

export const EvalResultSchema = z
  .object({
    schema: z.literal('kernelseek.eval/1'),
    task: z.string(),
    device: z.enum(['cpu', 'cuda']),
    gpu: z.string().nullable().optional(),
    arch: z.string().nullable().optional(),
    status: z.enum(EVAL_STATUSES),
    correct: z.boolean(),
    summary: z
      .object({
        scenarios: z.number().int().nonnegative(),
        correct: z.number().int().nonnegative(),
        speedup_vs_baseline_geomean: nullableNumber,
        speedup_vs_peer_geomean: z.record(z.string(), nullableNumber),
        best_peer: z.string().nullable(),
        pct_of_peak_median: nullableNumber,
        seconds: z.number(),
        // Absent in results of harnesses before the intervals (and on the CUDA path until it pairs rounds).
        speedup_vs_baseline_ci: interval.optional(),
        speedup_vs_peer_ci: z.record(z.string(), interval).optional(),
        verdict_vs_baseline: verdict.optional(),
        verdict_vs_peer: z.record(z.string(), verdict).optional(),
        // Present when the run's best so far was timed beside the candidate (--incumbent).
        speedup_vs_incumbent_geomean: nullableNumber.optional(),
        speedup_vs_incumbent_ci: interval.optional(),
        verdict_vs_incumbent: verdict.optional(),
      })
      .loose(),
    scenarios: z.array(ScenarioResultSchema),
    compile: z
      .object({
        seconds: nullableNumber,
        registers: nullableNumber.optional(),
        smem_bytes: nullableNumber.optional(),
        spills: nullableNumber.optional(),
        log: z.string(),
      })
      .loose(),
    messages: z.array(z.string()),
  })
  .loose();

export type EvalResult = z.infer<typeof EvalResultSchema>;
export type ScenarioResult = z.infer<typeof ScenarioResultSchema>;

/**
 * What running the harness can come to. Candidate failures are results (with the harness's JSON);
 * `harness_error` means no result could be produced at all (the harness crashed, or was killed at
 * the hard time limit before it wrote one).
 */
export type EvalOutcome =
  | { status: EvalStatus; result: EvalResult; wallSeconds: number }
  | { status: 'harness_error'; message: string; stderrTail: string; wallSeconds: number };

/** Speedup over the fastest peer (geomean), when the result has one. */
export function speedupVsBestPeer(result: EvalResult): number | null {
  const best = result.summary.best_peer;
  return best ? (result.summary.speedup_vs_peer_geomean[best] ?? null) : null;
}

/**
 * `eval --compile-only`'s result, schema `kernelseek.compile/1` (harness/compile_only.py): the
 * source checks, the compile and the binary checks, no scenario.
 */
export const CompileResultSchema = z
  .object({
    schema: z.literal('kernelseek.compile/1'),
    task: z.string(),
    device: z.enum(['cpu', 'cuda']),
    status: z.enum(['ok', 'compile_error', 'rejected']),
    compile: z
      .object({ seconds: nullableNumber, registers: nullableNumber.optional(), smem_bytes: nullableNumber.optional(), spills: nullableNumber.optional(), log: z.string() })
      .loose()
      .nullable(),
    messages: z.array(z.string()),
    seconds: z.number().optional(),
  })
  .loose();
export type CompileResult = z.infer<typeof CompileResultSchema>;

/**
 * A compile-only result in the shape every consumer of an evaluation reads: no scenario, not
 * correct (nothing ran), the compile block and the messages; the harness's own document kept under
 * `compile_only`, which `kernelseek eval --compile-only --json` prints.
 */
export function compileOnlyAsEval(c: CompileResult): EvalResult {
  return {
    schema: 'kernelseek.eval/1',
    task: c.task,
    device: c.device,
    status: c.status,
    correct: false,
    summary: { scenarios: 0, correct: 0, speedup_vs_baseline_geomean: null, speedup_vs_peer_geomean: {}, best_peer: null, pct_of_peak_median: null, seconds: c.seconds ?? 0 },
    scenarios: [],
    compile: c.compile ?? { seconds: null, log: '' },
    messages: ['compile only: no scenario ran', ...c.messages],
    compile_only: c,
  };
}
