import type { AgentConfig } from '../../config/index.js';
import type { Run } from '../../db/index.js';
import { priceOf } from '../model/pricing.js';
import { capText } from '../tools/output-cap.js';
import type { ToolResult } from '../tools/tool-types.js';

/**
 * Bounds on one model step (issue 39): how many of one message's tool calls run, how long one
 * command may be, how much of one tool result the model gets, and what one request may cost. Each
 * refusal is something the model reads (a tool result) or, for the budget, the run's truthful end;
 * never a failed turn that a resume would report as an interrupted call.
 */
export type StepLimits = AgentConfig['stepLimits'];

const COMMAND_TOOLS = new Set(['bash', 'gpu_bash']);

/**
 * Why a call is not executed, or null when it may run. `index` counts the message's tool calls from 0;
 * the first refusal over the count explains itself, the others point back to it (each costs tokens).
 */
export function refuseToolCall(limits: StepLimits, call: { name: string; input: unknown }, index: number, count: number): string | null {
  if (index >= limits.maxToolCalls) {
    if (index > limits.maxToolCalls) return 'Refused, not executed: over the limit of tool calls per message (see the first refused call).';
    return (
      `Refused, not executed: your message made ${count} tool calls and at most ${limits.maxToolCalls} run per message, so this one and the ${count - index - 1} after it were not run. ` +
      'Make fewer calls per message; repeat a refused one in a later message if it is still needed.'
    );
  }
  const command = (call.input as { command?: unknown } | null)?.command;
  if (COMMAND_TOOLS.has(call.name) && typeof command === 'string') {
    const bytes = Buffer.byteLength(command, 'utf8');
    if (bytes > limits.maxCommandBytes) {
      return (
        `Refused, not executed: the command is ${kib(bytes)} and one command may be at most ${kib(limits.maxCommandBytes)}. ` +
        'Write large files with str_replace_based_edit_tool (create, then insert or str_replace in parts) and keep commands short.'
      );
    }
  }
  return null;
}

function kib(bytes: number): string {
  return bytes >= 1024 ? `${(bytes / 1024).toFixed(bytes % 1024 === 0 ? 0 : 1)} KiB` : `${bytes} bytes`;
}

/** A tool result cut to the limit (head and tail kept), with a note saying so. */
export function capToolResult(limits: StepLimits, result: ToolResult): ToolResult {
  const max = limits.maxToolResultChars;
  if (result.content.length <= max) return result;
  const note = `\n[this tool result was ${result.content.length} characters; a tool result is cut to ${max}: the middle was left out. Ask for less at once, e.g. a range of lines, head or tail.]`;
  const body = capText(result.content, Math.max(2, max - note.length - 64));
  return { ...result, content: `${body}${note}` };
}

/** The least output a request is worth sending with; below it the run's dollar budget is spent. */
export const MIN_OUTPUT_TOKENS = 1024;

export type RequestAllowance =
  /** `maxTokens`: the request's max_tokens, lowered where the budget left cannot pay for the configured one. */
  | { kind: 'ok'; maxTokens: number; worstCaseUsd: number }
  | { kind: 'spent'; message: string };

/**
 * The dollar budget, checked before a request at its worst case: every input token written to the
 * cache (the dearest way to be billed for input, 1.25x) and the whole output allowance used. The
 * allowance is lowered to what the budget left pays for; when even MIN_OUTPUT_TOKENS does not fit,
 * no request is sent. So spend stays within the budget, up to the error of the input estimate.
 */
export function requestAllowance(run: Pick<Run, 'model' | 'costUsd' | 'budgetUsd'>, estimatedInputTokens: number, maxTokens: number): RequestAllowance {
  const { price } = priceOf(run.model);
  const perInput = Math.max(price.input, price.cacheWrite5m) / 1_000_000;
  const perOutput = price.output / 1_000_000;
  const inputUsd = estimatedInputTokens * perInput;
  const left = run.budgetUsd - run.costUsd;
  const affordable = Math.floor((left - inputUsd) / perOutput);
  const allowance = Math.min(maxTokens, affordable);
  if (allowance < Math.min(MIN_OUTPUT_TOKENS, maxTokens)) {
    const least = inputUsd + Math.min(MIN_OUTPUT_TOKENS, maxTokens) * perOutput;
    return {
      kind: 'spent',
      message: `The dollar budget is used up: $${run.costUsd.toFixed(2)} of $${run.budgetUsd.toFixed(2)} spent, and the next request could cost up to $${least.toFixed(2)} (about ${estimatedInputTokens} input tokens and at least ${Math.min(MIN_OUTPUT_TOKENS, maxTokens)} of output at ${price.family} prices).`,
    };
  }
  return { kind: 'ok', maxTokens: allowance, worstCaseUsd: inputUsd + allowance * perOutput };
}
