/**
 * A person's reply in a run's thread → a control, a question for the agent, or nothing. Slash
 * commands do not work in threads (slackapi/bolt-js#1816), so a reply that is exactly one control
 * word steers the run; any other reply becomes the agent's next question. Lines starting with `//`
 * or `(aside)` are asides between people and never reach the agent.
 */

export type ThreadControl = 'stop' | 'pause' | 'resume' | 'status';

export type ThreadReply =
  | { kind: 'control'; action: ThreadControl }
  | { kind: 'budget'; evals: number }
  /** `show 3` (or `show eval 3`, `eval #3`): post evaluation 3's whole result in the thread. */
  | { kind: 'show'; seq: number }
  | { kind: 'question'; text: string }
  | { kind: 'invalid'; error: string }
  | { kind: 'ignore'; reason: 'aside' | 'empty' };

export const ASIDE_PREFIXES = ['//', '(aside)'] as const;
const CONTROLS: readonly ThreadControl[] = ['stop', 'pause', 'resume', 'status'];
const MAX_BUDGET_STEP = 10_000;

function isAside(line: string): boolean {
  const t = line.trimStart().toLowerCase();
  return ASIDE_PREFIXES.some((p) => t.startsWith(p));
}

/** Slack's escaping undone, so the model reads what the person typed. */
export function decodeSlackText(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

export function parseThreadReply(raw: string, botUserId?: string): ThreadReply {
  let text = raw;
  // "@KernelSeek stop" means the same as "stop".
  if (botUserId) text = text.replace(new RegExp(`^\\s*<@${botUserId}(\\|[^>]*)?>[\\s:,]*`), '');
  const lines = text.split('\n');
  const kept = lines.filter((l) => !isAside(l));
  const body = decodeSlackText(kept.join('\n')).trim();
  if (!body) return { kind: 'ignore', reason: kept.length < lines.length ? 'aside' : 'empty' };

  const word = body.toLowerCase().replace(/[.!]+$/, '');
  if ((CONTROLS as readonly string[]).includes(word)) return { kind: 'control', action: word as ThreadControl };

  const show = /^(?:show\s+(?:eval\s*)?|eval\s*)#?(\d{1,6})$/i.exec(body.replace(/[.!]+$/, ''));
  if (show) return { kind: 'show', seq: Number(show[1]) };

  const budget = /^budget\b\s*(.*)$/i.exec(body.replace(/[.!]+$/, ''));
  if (budget) {
    const m = /^\+\s*(\d+)(?:\s*(?:evals?|evaluations?))?$/i.exec(budget[1]!.trim());
    const n = m ? Number(m[1]) : NaN;
    if (!Number.isInteger(n) || n < 1 || n > MAX_BUDGET_STEP) {
      return { kind: 'invalid', error: `To add evaluations to this run's budget write \`budget +N\` with N from 1 to ${MAX_BUDGET_STEP}, e.g. \`budget +50\`.` };
    }
    return { kind: 'budget', evals: n };
  }
  return { kind: 'question', text: body };
}
