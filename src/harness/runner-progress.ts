import { z } from 'zod';
import type { EvaluationProgress } from './evaluation.js';

/**
 * The harness's `--progress jsonl` events (task-spec.md): one JSON object per stderr line. Unknown
 * events and extra fields are tolerated, so a newer harness never breaks an older worker.
 */
const num = z.number().nullable().optional();
export const HarnessProgressEventSchema = z.discriminatedUnion('event', [
  z.object({ event: z.literal('compile'), ok: z.boolean().optional(), seconds: num, cached: z.boolean().optional() }).loose(),
  z.object({ event: z.literal('phase'), phase: z.string(), id: z.string().optional(), i: z.number().optional(), n: z.number().optional() }).loose(),
  z
    .object({
      event: z.literal('scenario'),
      id: z.string(),
      i: z.number().optional(),
      n: z.number().optional(),
      status: z.string().optional(),
      correct: z.boolean().optional(),
      time_ms: num,
      reason: z.string().nullable().optional(),
    })
    .loose(),
  z.object({ event: z.literal('done'), status: z.string().optional(), correct: z.boolean().optional(), seconds: num }).loose(),
]);
export type HarnessProgressEvent = z.infer<typeof HarnessProgressEventSchema>;

/**
 * Reads one stderr line: a progress event becomes `EvaluationProgress`; anything else (a warning,
 * a traceback, an event we do not know) returns undefined and stays in the stderr text.
 */
export function parseProgressLine(line: string): EvaluationProgress | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  const parsed = HarnessProgressEventSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  return toProgress(parsed.data);
}

function seconds(s: number | null | undefined): string {
  return typeof s === 'number' ? `${s.toFixed(1)} s` : '';
}

export function toProgress(e: HarnessProgressEvent): EvaluationProgress {
  switch (e.event) {
    case 'compile':
      return {
        phase: 'compile',
        status: e.ok === false ? 'compile_error' : 'ok',
        message: e.ok === false ? 'compile failed' : e.cached ? 'compiled (cached)' : `compiled in ${seconds(e.seconds)}`,
      };
    case 'phase':
      return { phase: e.phase, i: e.i, n: e.n, scenario: e.id, message: e.id ? `${e.phase} ${e.id}` : e.phase };
    case 'scenario': {
      const parts = [e.id, e.status ?? (e.correct ? 'ok' : 'failed')];
      if (typeof e.time_ms === 'number') parts.push(`${e.time_ms.toPrecision(3)} ms`);
      if (e.reason) parts.push(e.reason);
      return { phase: 'scenario', i: e.i, n: e.n, scenario: e.id, status: e.status, timeMs: e.time_ms ?? null, message: parts.join(' ') };
    }
    case 'done':
      return { phase: 'done', status: e.status, message: `${e.status ?? 'done'} after ${seconds(e.seconds)}` };
  }
}
