import { z } from 'zod';

/**
 * The task format (`kernels/<task>/task.yaml`, schema `kernelseek.task/1`), as documented in
 * docs/tasks.md. The Python harness reads the same file; this schema lets the CLI and Slack list and
 * validate tasks without starting Python.
 */

const NAME = /^[a-z0-9_]+$/;
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ARCH = /^sm_\d+a?$/;

export const DTYPES = ['float32', 'float16', 'bfloat16', 'float64', 'int32', 'int64', 'int8', 'uint8'] as const;

const expression = z.union([z.string().min(1), z.number()]).transform(String);

export const TaskArgSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    name: z.string().regex(IDENT),
    kind: z.literal('tensor'),
    dtype: z.enum(DTYPES),
    role: z.enum(['input', 'output']),
  }),
  z.strictObject({
    name: z.string().regex(IDENT),
    kind: z.enum(['int32', 'int64', 'float32']),
    value: expression,
  }),
  z.strictObject({ name: z.string().regex(IDENT), kind: z.literal('stream') }),
]);
export type TaskArg = z.infer<typeof TaskArgSchema>;

const ScenarioValue = z.union([z.number(), z.string(), z.boolean()]);

export const TaskSchema = z
  .object({
    schema: z.literal('kernelseek.task/1'),
    name: z.string().regex(NAME, { message: 'must be lower-case letters, digits and _ (the folder name)' }),
    summary: z.string().min(1),
    device: z.enum(['cpu', 'cuda']),
    architectures: z.array(z.string().regex(ARCH, { message: 'must look like sm_90' })).default([]),
    kernel: z.object({
      language: z.enum(['cpp', 'cuda']),
      file: z.string().regex(/^[A-Za-z0-9_.-]+\.(cu|cpp|cc|cxx)$/, { message: 'must be a file name ending in .cu or .cpp' }),
      baseline: z.string().min(1),
      entry: z.string().regex(IDENT, { message: 'must be a C identifier' }),
      args: z.array(TaskArgSchema).min(1),
      compile: z.object({ flags: z.array(z.string()).default([]) }).partial().default({ flags: [] }),
    }).loose(),
    scenarios: z.object({
      params: z.array(z.string().regex(IDENT)).min(1),
      grid: z
        .array(z.object({ where: z.string().min(1).optional() }).catchall(z.array(ScenarioValue).min(1)))
        .default([]),
      list: z.array(z.record(z.string(), ScenarioValue)).default([]),
      id: z.string().min(1),
      quick: z.array(z.string()).default([]),
    }).loose(),
    tolerance: z.object({
      rule: z.literal('lowp_relative'),
      factor: z.number().positive(),
      atol: z.number().nonnegative(),
    }).loose(),
    metrics: z.object({ flops: expression, bytes: expression }),
    peak: z.object({ tflops: z.number().positive(), gbps: z.number().positive() }),
    peers: z.array(z.object({ name: z.string().regex(IDENT), fn: z.string().regex(IDENT) }).loose()).default([]),
    goal: z.object({ vs: z.enum(['best_peer', 'baseline']), speedup: z.number().positive() }),
    plausibility: z.object({ max_speedup_vs_baseline: z.number().positive(), max_pct_of_peak: z.number().positive() }).partial().default({}),
    denylist: z.array(z.string()).default([]),
    timing: z.record(z.string(), z.number()).default({}),
  })
  .loose()
  .superRefine((task, ctx) => {
    if (task.device === 'cuda' && task.architectures.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['architectures'], message: 'a cuda task must list at least one architecture, e.g. [sm_90]' });
    }
    if (task.device === 'cpu' && task.kernel.language !== 'cpp') {
      ctx.addIssue({ code: 'custom', path: ['kernel', 'language'], message: 'a cpu task is written in cpp' });
    }
    const params = new Set(task.scenarios.params);
    task.scenarios.grid.forEach((block, i) => {
      for (const key of Object.keys(block)) {
        if (key !== 'where' && !params.has(key)) {
          ctx.addIssue({ code: 'custom', path: ['scenarios', 'grid', i, key], message: `'${key}' is not in scenarios.params (${[...params].join(', ')})` });
        }
      }
    });
    if (!task.kernel.args.some((a) => a.kind === 'tensor' && a.role === 'output')) {
      ctx.addIssue({ code: 'custom', path: ['kernel', 'args'], message: 'at least one tensor argument must have role: output' });
    }
  });

export type Task = z.infer<typeof TaskSchema>;
