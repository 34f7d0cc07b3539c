import type { EvaluationReport, QuestionReport, RunView } from '../agent-port.js';
import { capText, escapeMrkdwn, INLINE_TEXT_CHARS } from '../poster/limits.js';
import { ACTION_IDS, PROMOTE_REACTIONS } from './action-ids.js';
import type { KnownBlock } from './block-kit.js';
import { context, fmtSpeedup, quote, section, who, withMentions, type SlackView } from './format.js';

/**
 * The messages a run posts in its thread besides the status card: new bests, questions asked,
 * errors (decision cards: decision-card.ts). Each is one message; long text is cut and attached in full.
 */

/**
 * An evaluation's whole result as people read it (intervals and verdicts vs the baseline and peers,
 * the per-scenario table, the compiler's output): what the model read, posted as a file in the thread
 * (a file has no length limit that matters here, a message does).
 */
export function detailsFile(evaluation: Pick<EvaluationReport, 'seq' | 'details'>): SlackView['files'] {
  return evaluation.details ? [{ filename: `eval-${evaluation.seq}.txt`, content: evaluation.details, title: `Evaluation #${evaluation.seq}: the whole result` }] : undefined;
}

function overflowFile(name: string, full: string | undefined): SlackView['files'] {
  return full ? [{ filename: name, content: full, title: 'Full text' }] : undefined;
}

export function renderNewBest(run: RunView, evaluation: EvaluationReport, previousSpeedup: number | null, bestPeer: string | null): SlackView {
  const vsPeer = evaluation.speedupVsBestPeer != null ? `, *${fmtSpeedup(evaluation.speedupVsBestPeer)}* vs ${escapeMrkdwn(bestPeer ?? evaluation.bestPeer ?? 'the strongest peer')}` : '';
  const before = previousSpeedup != null ? ` (was ${fmtSpeedup(previousSpeedup)})` : '';
  // A quick run's best on its subset steers it; it is not a counted result and says so.
  const quick = evaluation.scenarioSet !== undefined && evaluation.scenarioSet !== 'all';
  const text = `:trophy: New best${quick ? ' on the quick subset (not counted)' : ''}: *${fmtSpeedup(evaluation.speedupVsBaseline)}* vs baseline${vsPeer}${before} — eval #${evaluation.seq}, ${evaluation.scenarios.correct}/${evaluation.scenarios.total} scenarios correct.`;
  const blocks: KnownBlock[] = [section(text)];
  if (evaluation.commit) blocks.push(context(`commit \`${evaluation.commit.slice(0, 12)}\` in ${run.id}'s workspace · the per-scenario table with intervals and verdicts is attached`));
  return { text: text.replace(/\*/g, ''), blocks, files: detailsFile(evaluation) };
}

/** Names of the evidence a decision point carries (the engine's and the bank's), as people read them. */
export const EVIDENCE_LABELS: Record<string, string> = {
  evaluations: 'Evaluations',
  evals: 'Evaluations',
  best_speedup_vs_baseline: 'Best vs baseline (counted)',
  best_speedup: 'Best vs baseline (counted)',
  best_speedup_vs_peer: 'Best vs strongest peer (counted)',
  best_vs_peer: 'Best vs strongest peer (counted)',
  best_evaluation: 'Best evaluation',
  quick_best_speedup_vs_baseline: 'Quick-subset best (not counted)',
  quick_best_evaluation: 'Quick-subset best evaluation',
  evals_since_gain: 'Evaluations since the last gain',
  failing_streak: 'Failing in a row',
  last_status: 'Last outcome',
  target: 'Target',
  pct_of_peak: '% of peak (median)',
};

const SPEEDUPS = new Set(['best_speedup_vs_baseline', 'best_speedup', 'best_speedup_vs_peer', 'best_vs_peer', 'quick_best_speedup_vs_baseline', 'target', 'last_gain', 'weakest_speedup']);

export function evidenceValue(key: string, v: unknown): string {
  if (typeof v === 'number' && SPEEDUPS.has(key)) return fmtSpeedup(v);
  if (typeof v === 'number' && (key === 'best_evaluation' || key === 'quick_best_evaluation')) return `#${v}`;
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(3)));
  if (typeof v === 'string') return escapeMrkdwn(v.length > 200 ? `${v.slice(0, 199)}…` : v);
  if (Array.isArray(v)) return escapeMrkdwn(v.slice(0, 5).map(String).join(', ') + (v.length > 5 ? ', …' : ''));
  return escapeMrkdwn(JSON.stringify(v)?.slice(0, 200) ?? String(v));
}

export function renderQuestionAsked(run: RunView, question: QuestionReport): SlackView {
  const body = capText(question.text, INLINE_TEXT_CHARS);
  const blocks: KnownBlock[] = [];
  if (question.source === 'bank') {
    const after = question.trigger ? `, after ${question.trigger.replace(/_/g, ' ')}` : '';
    blocks.push(section(`:books: *Question from the bank* (\`${escapeMrkdwn(question.bankId ?? '?')}\`${after})\n${quote(body.text)}`));
  } else {
    blocks.push(section(`:speech_balloon: *Question from ${who(question.author)}* — asked to the agent now\n${quote(body.text)}`));
    blocks.push({
      type: 'actions',
      elements: [{ type: 'button', action_id: ACTION_IDS.promoteQuestion, text: { type: 'plain_text', text: 'Add to the question bank' }, value: `${run.id}:${question.id}` }],
    });
    blocks.push(context(`Or react with :${PROMOTE_REACTIONS[0]}: to the reply that asked it. Question ${question.id}.`));
  }
  // People are named as mentions (Slack renders them), never as raw ids, in the notification text too.
  const by = question.source === 'bank' ? 'the bank' : who(question.author);
  return { text: `Question from ${by}: ${escapeMrkdwn(body.text)}`, blocks, files: overflowFile('question.txt', body.overflow) };
}

export function renderRunError(run: RunView, message: string, fatal: boolean): SlackView {
  const body = capText(message, INLINE_TEXT_CHARS);
  const head = fatal ? `:x: *${run.id} stopped because of an error*` : ':warning: *Error* (the run carries on)';
  return { text: `${fatal ? 'Run failed' : 'Error'}: ${withMentions(escapeMrkdwn(body.text))}`, blocks: [section(`${head}\n${withMentions(quote(body.text))}`)], files: overflowFile('error.txt', body.overflow) };
}
