import type { RunView } from '../agent-port.js';
import { escapeMrkdwn } from '../poster/limits.js';
import type { KnownBlock } from './block-kit.js';
import { context, fmtSpeedup, header, section, STATUS_LABEL, who } from './format.js';

/** A run as App Home lists it, with the link to its thread already looked up. */
export interface HomeRun {
  run: Pick<RunView, 'id' | 'task' | 'arch' | 'status' | 'owner' | 'best' | 'evaluations' | 'target' | 'createdAt'>;
  link: string;
}

function runLine({ run, link }: HomeRun, withOwner: boolean): string {
  const s = STATUS_LABEL[run.status] ?? { emoji: '', label: run.status };
  const best = run.best ? `best *${fmtSpeedup(run.best.speedupVsBaseline)}*` : 'no best yet';
  const task = `${escapeMrkdwn(run.task)}${run.arch ? ` (${escapeMrkdwn(run.arch)})` : ''}`;
  return `${s.emoji} ${link} ${task} — ${s.label.toLowerCase()}, ${best}, eval ${run.evaluations.used}/${run.evaluations.budget}${withOwner ? ` — ${who(run.owner)}` : ''}`;
}

function packed(lines: string[], empty: string): KnownBlock[] {
  if (lines.length === 0) return [section(empty)];
  const blocks: KnownBlock[] = [];
  let chunk = '';
  for (const line of lines) {
    if (chunk.length + line.length + 1 > 2900) {
      blocks.push(section(chunk));
      chunk = '';
    }
    chunk += (chunk ? '\n' : '') + line;
  }
  if (chunk) blocks.push(section(chunk));
  return blocks;
}

/** A person's App Home: their runs, and the team's best run per task (and architecture). */
export function renderAppHome(input: { user: string; mine: HomeRun[]; bests: HomeRun[] }): { type: 'home'; blocks: KnownBlock[] } {
  const blocks: KnownBlock[] = [
    header('KernelSeek'),
    context(`Your runs and the team's bests, for ${who(input.user)}. \`/kernelseek start <task>\` in a channel starts a run; \`/kernelseek continue <run>\` goes on from a run's best.`),
    header('Your runs'),
    ...packed(input.mine.map((r) => runLine(r, false)), 'You have not started a run yet.'),
    { type: 'divider' },
    header("The team's bests per task"),
    ...packed(input.bests.map((r) => runLine(r, true)), 'No run has a correct candidate yet.'),
  ];
  return { type: 'home', blocks: blocks.slice(0, 100) };
}
