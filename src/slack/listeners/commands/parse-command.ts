import damerauLevenshtein from 'damerau-levenshtein';
import { parseDuration } from '../../../config/index.js';

/**
 * `/kernelseek …` text → a command, or an error that says exactly how to fix the input. Pure, so
 * every malformed form is unit-tested; the handler acks first and only then looks anything up.
 */

export interface StartOptions {
  target?: number;
  /** Evaluations. */
  budget?: number;
  model?: string;
  arch?: string;
  /** How long a decision point waits for a person before the bank asks. */
  timeoutSeconds?: number;
  /** The bank answers every decision point at once. */
  auto: boolean;
}

export type SlashCommand =
  | { kind: 'start'; task: string; options: StartOptions }
  | { kind: 'status'; runId: string | undefined }
  | { kind: 'stop'; runId: string }
  | { kind: 'list' }
  | { kind: 'tasks' }
  | { kind: 'bank' }
  | { kind: 'digest'; window?: DigestWindowName | undefined }
  /** `continue <run>` (same goal) or `fork <run> --goal … | --arch …` (another goal or GPU). */
  | { kind: 'continue'; runId: string; fork: boolean; options: StartOptions }
  | { kind: 'chart'; runId: string }
  | { kind: 'help' };

export type DigestWindowName = 'day' | 'week';

export type ParsedCommand = { ok: true; command: SlashCommand } | { ok: false; error: string };

export const SUBCOMMANDS = ['start', 'continue', 'fork', 'status', 'stop', 'chart', 'list', 'tasks', 'bank', 'digest', 'help'] as const;

export const CONTINUE_USAGE = '`/kernelseek continue <run> [budget=…] [timeout=…] [auto]`';
export const FORK_USAGE = '`/kernelseek fork <run> --goal 1.5 [--arch sm_100] [budget=…]`';

export const START_USAGE = '`/kernelseek start <task> [target=1.1] [budget=200] [model=…] [arch=sm_90] [timeout=10m] [auto]`';

/** Each start option, with the form it takes and an example: the error text is built from these. */
export const START_OPTIONS = [
  { key: 'target', form: 'target=<speedup>', example: 'target=1.1', meaning: 'goal: geomean speedup over the task’s goal reference' },
  { key: 'budget', form: 'budget=<evaluations>', example: 'budget=200', meaning: 'how many candidates the harness may evaluate' },
  { key: 'model', form: 'model=<model id>', example: 'model=claude-sonnet-4-5', meaning: 'the Claude model for this run' },
  { key: 'arch', form: 'arch=sm_<NN>', example: 'arch=sm_90', meaning: 'GPU architecture (cuda tasks)' },
  { key: 'timeout', form: 'timeout=<duration>', example: 'timeout=10m', meaning: 'how long a decision point waits for a person' },
  { key: 'auto', form: 'auto', example: 'auto', meaning: 'the question bank answers every decision point at once' },
] as const;

const RUN_ID = /^[a-z0-9][a-z0-9-]{2,63}$/;
const TASK_NAME = /^[a-z][a-z0-9_]*$/;
const MODEL_ID = /^[a-z0-9][a-z0-9.\-_@:]*$/i;
const ARCH = /^sm_\d+a?$/;
const MAX_BUDGET = 10_000;
const MAX_TIMEOUT_SECONDS = 7 * 24 * 3600;

const validKeys = () => START_OPTIONS.map((o) => o.form).join(' · ');

/** Slack sends &, < and > as HTML entities; fancy quotes come from phones and some keyboards. */
function normalise(text: string): string {
  return text
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/[\u201c\u201d\u2018\u2019]/g, '')
    .replace(/\u00a0/g, ' ')
    .replace(/\s*=\s*/g, '=')
    .trim();
}

/**
 * The closest of `candidates` to `word`, when it is close enough to be a typo: within a third of
 * its letters, at least one. The distance is Damerau–Levenshtein's, where a swap of neighbours (the
 * commonest typo: `strat`, `stauts`) is one edit; plain Levenshtein counts it as two and would offer
 * `start` for `stauts`. A candidate also matches by the part after an underscore (`softmx` →
 * `cpu_softmax`): people remember the operator, not the prefix.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  const w = word.toLowerCase();
  for (const c of candidates) {
    const parts = c.toLowerCase().split('_');
    const forms = parts.map((_, i) => parts.slice(i).join('_'));
    for (const form of forms) {
      // The typed word first: the library's early exit for hopeless pairs returns its length.
      const d = damerauLevenshtein(w, form).steps;
      if (d < bestD) [best, bestD] = [c, d];
    }
  }
  return bestD <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

/**
 * `--goal 1.5`, `--goal=1.5`, `—gpu sm_100` (phones turn `--` into a dash) → `target=1.5`,
 * `arch=sm_100`: the flag forms `fork` is documented with, read as the start options they mean.
 */
function flagsToOptions(tokens: string[]): string[] | { error: string } {
  const aliases: Record<string, string> = { goal: 'target', gpu: 'arch' };
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!.replace(/^[\u2013\u2014]/, '--');
    if (!token.startsWith('--')) {
      out.push(token);
      continue;
    }
    const [rawKey, inline] = token.slice(2).split('=', 2) as [string, string | undefined];
    const key = aliases[rawKey.toLowerCase()] ?? rawKey.toLowerCase();
    if (key === 'auto') {
      out.push(inline === undefined ? 'auto' : `auto=${inline}`);
      continue;
    }
    const value = inline ?? tokens[i + 1];
    if (inline === undefined) i += 1;
    if (value === undefined || value.startsWith('--')) return { error: `\`--${rawKey}\` needs a value, e.g. \`--goal 1.5\` or \`--arch sm_90\`.` };
    out.push(`${key}=${value}`);
  }
  return out;
}

function parseOptions(rest: string[]): { ok: true; options: StartOptions } | { ok: false; error: string } {
  const tokens = flagsToOptions(rest);
  if (!Array.isArray(tokens)) return { ok: false, error: tokens.error };
  const parsed = parseStart(['task', ...tokens]);
  return parsed.ok ? { ok: true, options: (parsed.command as { options: StartOptions }).options } : parsed;
}

function parseContinue(args: string[], fork: boolean): ParsedCommand {
  const sub = fork ? 'fork' : 'continue';
  const r = parseRunId(args[0], sub, true);
  if (!r.ok) return r;
  const parsed = parseOptions(args.slice(1));
  if (!parsed.ok) return { ok: false, error: `${parsed.error.replace(/ Usage: .*$/, '')} Usage: ${fork ? FORK_USAGE : CONTINUE_USAGE}` };
  if (fork && parsed.options.target === undefined && parsed.options.arch === undefined) {
    return { ok: false, error: `A fork changes the goal or the GPU: ${FORK_USAGE}. To go on with the same goal, \`/kernelseek continue ${r.runId}\`.` };
  }
  return { ok: true, command: { kind: 'continue', runId: r.runId!, fork, options: parsed.options } };
}

function parseStart(args: string[]): ParsedCommand {
  const [task, ...rest] = args;
  if (!task) return { ok: false, error: `Name a task to optimise: ${START_USAGE}. \`/kernelseek tasks\` lists the tasks.` };
  if (task.includes('=')) {
    return { ok: false, error: `The task comes first, then the options: ${START_USAGE}. \`/kernelseek tasks\` lists the tasks.` };
  }
  if (!TASK_NAME.test(task)) {
    return { ok: false, error: `\`${task}\` is not a task name (lower-case letters, digits and _). \`/kernelseek tasks\` lists the tasks.` };
  }
  const options: StartOptions = { auto: false };
  const seen = new Set<string>();
  for (const token of rest) {
    const eq = token.indexOf('=');
    const key = (eq === -1 ? token : token.slice(0, eq)).toLowerCase();
    const value = eq === -1 ? undefined : token.slice(eq + 1);
    const known = START_OPTIONS.find((o) => o.key === key);
    if (!known) {
      const guess = closest(key, START_OPTIONS.map((o) => o.key));
      const hint = guess ? ` Did you mean \`${START_OPTIONS.find((o) => o.key === guess)!.example}\`?` : '';
      const what = value === undefined ? `Unexpected \`${token}\`` : `Unknown option \`${key}\``;
      return { ok: false, error: `${what}.${hint} Valid options: ${validKeys()}. Usage: ${START_USAGE}` };
    }
    if (seen.has(key)) return { ok: false, error: `\`${key}\` is given twice; give it once.` };
    seen.add(key);
    const bad = (what: string) => ({ ok: false as const, error: `\`${token}\`: ${what}, e.g. \`${known.example}\`.` });
    switch (key) {
      case 'auto':
        if (value !== undefined && !['true', 'false', 'yes', 'no', 'on', 'off'].includes(value.toLowerCase())) {
          return bad('`auto` takes no value (or true/false)');
        }
        options.auto = value === undefined || ['true', 'yes', 'on'].includes(value.toLowerCase());
        break;
      case 'target': {
        const n = value === undefined ? NaN : Number(value.replace(/x$/i, ''));
        if (!Number.isFinite(n) || n <= 0 || n > 100) return bad('the target is a speedup greater than 0 (at most 100)');
        options.target = n;
        break;
      }
      case 'budget': {
        const n = value === undefined ? NaN : Number(value);
        if (!Number.isInteger(n) || n < 1 || n > MAX_BUDGET) return bad(`the budget is a whole number of evaluations from 1 to ${MAX_BUDGET}`);
        options.budget = n;
        break;
      }
      case 'model':
        if (!value || !MODEL_ID.test(value)) return bad('the model is a model id');
        options.model = value;
        break;
      case 'arch':
        if (!value || !ARCH.test(value.toLowerCase())) return bad('the architecture looks like sm_90');
        options.arch = value.toLowerCase();
        break;
      case 'timeout': {
        const seconds = value === undefined ? undefined : parseDuration(value);
        if (seconds === undefined || seconds <= 0 || seconds > MAX_TIMEOUT_SECONDS) return bad('the timeout is a duration such as 90s, 10m or 2h (at most 7d)');
        options.timeoutSeconds = seconds;
        break;
      }
    }
  }
  return { ok: true, command: { kind: 'start', task, options } };
}

function parseRunId(word: string | undefined, sub: string, required: boolean): { ok: true; runId: string | undefined } | { ok: false; error: string } {
  if (word === undefined) {
    if (!required) return { ok: true, runId: undefined };
    return { ok: false, error: `Which run? \`/kernelseek ${sub} <run id>\`, e.g. \`/kernelseek ${sub} ks-7f3a2c9d\`. \`/kernelseek list\` shows the runs.` };
  }
  const id = word.toLowerCase();
  if (!RUN_ID.test(id)) return { ok: false, error: `\`${word}\` is not a run id (they look like \`ks-7f3a2c9d\`). \`/kernelseek list\` shows the runs.` };
  return { ok: true, runId: id };
}

export function parseSlashCommand(raw: string): ParsedCommand {
  const words = normalise(raw).split(/\s+/).filter(Boolean);
  const [first, ...args] = words;
  if (!first) return { ok: true, command: { kind: 'help' } };
  const sub = first.toLowerCase();
  const extra = (n: number) =>
    args.length > n ? { ok: false as const, error: `\`/kernelseek ${sub}\` takes ${n === 0 ? 'no arguments' : 'one run id'}; remove \`${args.slice(n).join(' ')}\`.` } : undefined;
  switch (sub) {
    case 'start':
      return parseStart(args);
    case 'status': {
      const r = parseRunId(args[0], 'status', false);
      if (!r.ok) return r;
      return extra(1) ?? { ok: true, command: { kind: 'status', runId: r.runId } };
    }
    case 'stop': {
      const r = parseRunId(args[0], 'stop', true);
      if (!r.ok) return r;
      return extra(1) ?? { ok: true, command: { kind: 'stop', runId: r.runId! } };
    }
    case 'continue':
    case 'fork':
      return parseContinue(args, sub === 'fork');
    case 'chart': {
      const r = parseRunId(args[0], 'chart', true);
      if (!r.ok) return r;
      return extra(1) ?? { ok: true, command: { kind: 'chart', runId: r.runId! } };
    }
    case 'digest': {
      const window = args[0]?.toLowerCase();
      if (window === undefined) return { ok: true, command: { kind: 'digest' } };
      if (window !== 'day' && window !== 'week') return { ok: false, error: `\`/kernelseek digest\` covers a \`day\` (the default) or a \`week\`, e.g. \`/kernelseek digest week\`; not \`${args[0]}\`.` };
      return extra(1) ?? { ok: true, command: { kind: 'digest', window } };
    }
    case 'list':
    case 'tasks':
    case 'bank':
      return extra(0) ?? { ok: true, command: { kind: sub } };
    case 'help':
      return { ok: true, command: { kind: 'help' } };
    default: {
      const guess = closest(sub, SUBCOMMANDS);
      const hint = guess ? ` Did you mean \`/kernelseek ${guess}\`?` : '';
      return { ok: false, error: `Unknown command \`${first}\`.${hint} Commands: ${SUBCOMMANDS.join(', ')}. \`/kernelseek help\` explains each.` };
    }
  }
}
