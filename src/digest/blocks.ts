import type { types } from '@slack/bolt';
import { isQuietWindow, type DigestFigures, type DigestQuestion, type DigestRun, type DigestTask } from './figures.js';
import {
  describeBest,
  describeChange,
  describeEvaluationMix,
  describeWindow,
  formatSeconds,
  formatSpeedup,
  formatUsd,
  isSlackUserId,
  plural,
  taskLabel,
  truncate,
} from './format.js';

type KnownBlock = types.KnownBlock;

/** Slack's Block Kit limits (https://docs.slack.dev/reference/block-kit/blocks). */
export const SLACK_LIMITS = { blocks: 50, headerText: 150, sectionText: 3000, fields: 10, fieldText: 2000, contextElements: 10 } as const;

/** How many lines of each list a Slack message shows; `kernelseek digest --print` shows them all. */
export const SLACK_LIST_LIMITS = { tasks: 15, runs: 10, questions: 5, questionText: 180 } as const;

export interface DigestRenderOptions {
  timeZone: string;
  /** The heading: "KernelSeek daily digest · 2026-03-14" for a scheduled one, else "KernelSeek digest". */
  title?: string;
}

/** Slack mrkdwn treats &, < and > as markup: escape what people and models wrote. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const who = (id: string) => (isSlackUserId(id) ? `<@${id}>` : escapeMrkdwn(id));
const code = (s: string) => `\`${s.replace(/`/g, "'")}\``;

function taskLine(t: DigestTask): string {
  let result = describeBest(t);
  if (t.best) {
    const peer = t.best.speedupVsPeer == null ? '' : `, ${formatSpeedup(t.best.speedupVsPeer)} ${escapeMrkdwn(t.best.peer ?? 'best peer')}`;
    result = `*${formatSpeedup(t.best.speedupVsBaseline)}* baseline${peer} (${describeChange(t)}) · run ${code(t.best.runId)}`;
  }
  return `• *${escapeMrkdwn(taskLabel(t))}*: ${result} · ${plural(t.evaluations, 'eval')} · ${formatUsd(t.costUsd)}`;
}

function questionLine(q: DigestQuestion): string {
  const gain = `*${formatSpeedup(q.gain)}*${q.final ? '' : ' so far'}`;
  const source = q.source === 'bank' ? `bank ${code(q.bankId ?? 'question')}` : who(q.author);
  return `• ${gain} after “${escapeMrkdwn(truncate(q.text, SLACK_LIST_LIMITS.questionText))}” — ${source}, ${code(q.runId)} ${escapeMrkdwn(q.task)}`;
}

function runLine(r: DigestRun): string {
  const state = r.state === 'finished' && r.endReason === 'converged' ? 'finished (converged)' : r.state;
  const best = r.bestSpeedup == null ? 'no best yet' : `best ${formatSpeedup(r.bestSpeedup)}`;
  return `• ${code(r.id)} ${escapeMrkdwn(r.task)}${r.arch ? ` (${escapeMrkdwn(r.arch)})` : ''} · ${state} · ${best} · ${plural(r.evaluations, 'eval')} · ${formatUsd(r.costUsd)} · ${who(r.owner)}`;
}

/**
 * Lines under a bold heading, in as many sections as Slack's 3,000-character limit needs, at most
 * `limit` lines followed by how many were left out.
 */
function listSections(heading: string, lines: string[], limit: number): KnownBlock[] {
  const shown = lines.slice(0, limit).map((l) => truncate(l, SLACK_LIMITS.sectionText - heading.length - 10));
  if (lines.length > limit) shown.push(`_…and ${lines.length - limit} more (\`kernelseek digest --print\` lists all)_`);
  const blocks: KnownBlock[] = [];
  let text = `*${heading}*`;
  for (const line of shown) {
    if (text.length + 1 + line.length > SLACK_LIMITS.sectionText) {
      blocks.push({ type: 'section', text: { type: 'mrkdwn', text } });
      text = line;
    } else {
      text += `\n${line}`;
    }
  }
  blocks.push({ type: 'section', text: { type: 'mrkdwn', text } });
  return blocks;
}

function summaryFields(f: DigestFigures): { type: 'mrkdwn'; text: string }[] {
  const r = f.runs;
  const ended = [r.finished && `${r.finished} finished`, r.stopped && `${r.stopped} stopped`, r.failed && `${r.failed} failed`].filter(Boolean);
  const e = f.evaluations;
  return [
    { type: 'mrkdwn', text: `*Runs*\n${r.active} active, ${r.started} started${ended.length ? `, ${ended.join(', ')}` : ''}` },
    {
      type: 'mrkdwn',
      text: `*Evaluations*\n${e.total}${e.total ? ` (${describeEvaluationMix(e)})` : ''}\n${formatSeconds(e.harnessSeconds)} harness, ${formatSeconds(e.gpuSeconds)} on GPU`,
    },
    { type: 'mrkdwn', text: `*Model cost*\n${formatUsd(f.model.costUsd)} over ${plural(f.model.steps, 'step')}` },
    {
      type: 'mrkdwn',
      text: `*Questions*\n${f.questions.human} from people${f.questions.people ? ` (${plural(f.questions.people, 'person', 'people')})` : ''}, ${f.questions.bank} from the bank`,
    },
  ];
}

/** The one-line summary: the message's notification text and the fallback for clients without blocks. */
export function digestHeadline(f: DigestFigures, options: DigestRenderOptions): string {
  const title = options.title ?? 'KernelSeek digest';
  if (isQuietWindow(f)) return `${title} (${describeWindow(f.window, options.timeZone)}): no activity.`;
  const best = [...f.tasks].filter((t) => t.best).sort((a, b) => b.best!.speedupVsBaseline - a.best!.speedupVsBaseline)[0];
  const bestText = best ? `; best: ${taskLabel(best)} ${formatSpeedup(best.best!.speedupVsBaseline)}` : '';
  return `${title} (${describeWindow(f.window, options.timeZone)}): ${plural(f.runs.active, 'active run')}, ${plural(f.evaluations.total, 'evaluation')}, ${formatUsd(f.model.costUsd)} model cost${bestText}.`;
}

/** The digest as Block Kit blocks, within Slack's limits whatever the figures. */
export function renderDigestBlocks(f: DigestFigures, options: DigestRenderOptions): KnownBlock[] {
  const blocks: KnownBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(options.title ?? 'KernelSeek digest', SLACK_LIMITS.headerText), emoji: false } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: escapeMrkdwn(describeWindow(f.window, options.timeZone)) }] },
  ];
  if (isQuietWindow(f)) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: 'No runs, evaluations, model calls or questions in this window.' } });
    return blocks;
  }
  blocks.push({ type: 'section', fields: summaryFields(f) }, { type: 'divider' });
  if (f.tasks.length > 0) {
    // Tasks that produced a result first, best first: a truncated list keeps what matters.
    const ordered = [...f.tasks].sort((a, b) => (b.best?.speedupVsBaseline ?? -1) - (a.best?.speedupVsBaseline ?? -1));
    blocks.push(...listSections('Best speedups per task', ordered.map(taskLine), SLACK_LIST_LIMITS.tasks));
  }
  if (f.questions.top.length > 0) {
    blocks.push(...listSections('Questions before the largest gains', f.questions.top.map(questionLine), SLACK_LIST_LIMITS.questions));
  }
  if (f.runs.list.length > 0) {
    blocks.push(...listSections('Runs', f.runs.list.map(runLine), SLACK_LIST_LIMITS.runs));
  }
  blocks.push({
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: 'Speedups are geometric means over scenarios; a candidate counts only when correct on every scenario of the full set. Gain = best after a question’s next evaluations ÷ best before it.',
      },
    ],
  });
  return blocks;
}
