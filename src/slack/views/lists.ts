import type { RunView } from '../agent-port.js';
import { escapeMrkdwn } from '../poster/limits.js';
import { START_OPTIONS, START_USAGE } from '../listeners/commands/parse-command.js';
import { ASIDE_PREFIXES } from '../listeners/messages/parse-reply.js';
import type { KnownBlock } from './block-kit.js';
import { context, fmtSpeedup, section, STATUS_LABEL, who, type SlackView } from './format.js';
import { renderStatusCard, type CardExtras } from './status-card.js';

/** Ephemeral answers to `/kernelseek list | tasks | bank | help | status`. */

/** `scope` says whose runs these are ("this channel", "every channel …"). */
export function renderRunList(runs: RunView[], scope = 'this channel'): SlackView {
  if (runs.length === 0) return { text: `No runs yet in ${scope}. Start one with /kernelseek start <task>.`, blocks: [section(`No runs yet in ${scope}. Start one with \`/kernelseek start <task>\`.`)] };
  const lines = runs.map((r) => {
    const s = STATUS_LABEL[r.status] ?? { emoji: '', label: r.status };
    const where = r.slack ? ` in <#${r.slack.channel}>` : ` (${r.origin})`;
    return `${s.emoji} \`${r.id}\` *${escapeMrkdwn(r.task)}* — ${s.label.toLowerCase()}, eval ${r.evaluations.used}/${r.evaluations.budget}, best ${fmtSpeedup(r.best?.speedupVsBaseline)} — ${who(r.owner)}${where}`;
  });
  const blocks: KnownBlock[] = [];
  // 3000 characters per section: pack lines into as few sections as fit.
  let chunk = '';
  for (const line of lines) {
    if (chunk.length + line.length + 1 > 2900) {
      blocks.push(section(chunk));
      chunk = '';
    }
    chunk += (chunk ? '\n' : '') + line;
  }
  if (chunk) blocks.push(section(chunk));
  blocks.push(context(`Runs of ${scope}. \`/kernelseek status <run>\` shows one run’s card; \`/kernelseek stop <run>\` stops it.`));
  return { text: `${runs.length} run(s) in ${scope}`, blocks: blocks.slice(0, 50) };
}

export interface TaskLine {
  name: string;
  summary: string;
  device: string;
  architectures: string[];
  scenarios: number;
  peers: string[];
  goal: string;
}

export function renderTaskList(tasks: TaskLine[], problems: string[]): SlackView {
  const lines = tasks.map(
    (t) =>
      `• \`${t.name}\` (${t.device}${t.architectures.length ? ` ${t.architectures.join(', ')}` : ''}) — ${escapeMrkdwn(t.summary)} · ${t.scenarios} scenarios · peers: ${escapeMrkdwn(t.peers.join(', ')) || 'none'} · goal ${escapeMrkdwn(t.goal)}`,
  );
  const blocks: KnownBlock[] = [section(lines.length ? `*Tasks*\n${lines.join('\n')}` : 'No valid tasks are installed.')];
  if (problems.length) blocks.push(context(`${problems.length} task file(s) have problems; \`kernelseek tasks\` on the server shows them.`));
  blocks.push(context(`Start one: ${START_USAGE}`));
  return { text: `Tasks: ${tasks.map((t) => t.name).join(', ') || 'none'}`, blocks };
}

export interface BankLine {
  id: string;
  kind: string;
  triggers: string[];
  asks: number;
  /** Geometric mean of best-after / best-before over its attributed asks (1.00x = no gain). */
  meanGain: number | null;
  lastUsed: string | null;
}

export function renderBankList(entries: BankLine[]): SlackView {
  const top = [...entries].sort((a, b) => (b.meanGain ?? -Infinity) - (a.meanGain ?? -Infinity) || b.asks - a.asks).slice(0, 25);
  const lines = top.map(
    (e) => `• \`${e.id}\` ${e.kind.replace(/_/g, ' ')} · ${e.triggers.join(', ')} · asked ${e.asks}× · mean gain ${e.meanGain == null ? '—' : `${e.meanGain.toFixed(2)}x`}`,
  );
  return {
    text: `Question bank: ${entries.length} questions`,
    blocks: [
      section(`*Question bank* — ${entries.length} questions${entries.length > top.length ? ` (top ${top.length} by mean gain)` : ''}\n${lines.join('\n')}`),
      context('`kernelseek bank` on the server lists them all with their text.'),
    ],
  };
}

export function renderHelp(): SlackView {
  const options = START_OPTIONS.map((o) => `\`${o.form}\` ${o.meaning}`).join(' · ');
  const text = [
    '*KernelSeek* makes a kernel faster with a question-driven coding agent.',
    `• ${START_USAGE} — start a run; its thread shows a status card, new bests, decision points and questions. Options: ${options}.`,
    '• `/kernelseek status [run]` — a run’s status card (the latest in this channel without a run id).',
    '• `/kernelseek stop <run>` — stop a run (its owner or an admin).',
    '• `/kernelseek continue <run>` — a new run from that run’s best kernel, its history summarised · `/kernelseek fork <run> --goal 1.5 [--arch sm_100]` — the same for another goal or GPU.',
    '• `/kernelseek chart <run>` — the run’s chart in its thread: speedup per evaluation with intervals, the best so far, the peers’ and goal’s lines.',
    '• `/kernelseek list` — this channel’s recent runs · `/kernelseek tasks` — the tasks · `/kernelseek bank` — the question bank · `/kernelseek digest [week]` — post the digest here.',
    '*In a run’s thread*: a reply is the agent’s next question; written while a decision card is open, it answers that card (or use its buttons). A reply of just `stop`, `pause`, `resume`, `status` or `budget +N` steers the run. ' +
      `Lines starting with ${ASIDE_PREFIXES.map((p) => `\`${p}\``).join(' or ')} are asides and never reach the agent.`,
  ].join('\n');
  return { text: 'KernelSeek help', blocks: [section(text)] };
}

export function renderStatusReply(run: RunView, extras: CardExtras): SlackView {
  const card = renderStatusCard(run, extras);
  return { text: card.text, blocks: card.blocks };
}
