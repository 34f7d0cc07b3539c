import { describeEnd, type EvaluationReport, type RunView } from '../agent-port.js';
import { capText, escapeMrkdwn, INLINE_TEXT_CHARS } from '../poster/limits.js';
import { context, fields, fmtDuration, fmtSpeedup, fmtUsd, header, section, slackTime, STATUS_LABEL, who, withMentions, type SlackView } from './format.js';

/** What the status card shows beyond the run's own view: the latest evaluation and the peer's name. */
export interface CardExtras {
  lastEvaluation?: Pick<EvaluationReport, 'seq' | 'status' | 'correct' | 'scenarios' | 'scenarioSet' | 'failure'> | undefined;
  /** What the run does now, stage by stage (`thinking`, `eval #4: timing 3/11`); null or absent when idle. */
  now?: string | null | undefined;
  /** Name of the strongest peer the best candidate was compared with (e.g. `cudnn`). */
  bestPeer?: string | null | undefined;
}

export const THREAD_HELP =
  'Reply in this thread to ask the agent a question. `stop` · `pause` · `resume` · `status` · `budget +N` steer it; `show N` posts evaluation N\'s whole result; lines starting with `//` are asides.';

function correctness(extras: CardExtras): string {
  const e = extras.lastEvaluation;
  if (!e) return 'no evaluation yet';
  const mark = e.correct ? ':white_check_mark:' : ':x:';
  const quick = e.scenarioSet && e.scenarioSet !== 'all' ? ' (quick subset)' : '';
  const head = `${mark} eval #${e.seq}${quick}: ${e.scenarios.correct}/${e.scenarios.total} correct${e.correct ? '' : ` (${escapeMrkdwn(e.status)})`}`;
  // Why it failed, as the model read it first: the compiler's first errors, the first failing scenarios.
  const why = (e.failure ?? []).slice(0, 3).map((l) => (l.length > 180 ? `${l.slice(0, 179)}…` : l));
  return why.length > 0 ? `${head}\n\`\`\`${escapeMrkdwn(why.join('\n')).replace(/`/g, "'")}\`\`\`` : head;
}

/**
 * The one message per run that is edited in place: the thread's root. Everything a person wants at a
 * glance — state, step, evaluations, best speedups, correctness, cost, elapsed — and no history (that
 * is what the thread is for).
 */
export function renderStatusCard(run: RunView, extras: CardExtras = {}): SlackView {
  const s = STATUS_LABEL[run.status] ?? { emoji: ':grey_question:', label: run.status };
  const best = run.best;
  const vsPeer = best?.speedupVsBestPeer != null ? `${fmtSpeedup(best.speedupVsBestPeer)}${extras.bestPeer ? ` vs ${escapeMrkdwn(extras.bestPeer)}` : ''}` : '—';
  const state = [`${s.emoji} *${s.label}*`, `step ${run.steps.used}/${run.steps.budget}`, `eval ${run.evaluations.used}/${run.evaluations.budget}`];
  if (run.endReason && run.finishedAt) state.push(escapeMrkdwn(describeEnd(run.endReason)));
  if (run.waitingForWorker) state.push(`:hourglass: ${escapeMrkdwn(run.waitingForWorker)}`);
  if (extras.now && !run.finishedAt && !run.waitingFor) state.push(`now: ${escapeMrkdwn(extras.now)}`);
  // The counted best (full set, correct); a quick run's best on its subset beside it, labelled.
  const quick = run.quickBest ? `${fmtSpeedup(run.quickBest.speedupVsBaseline)} (quick subset, not counted)` : null;
  const blocks = [
    header(`KernelSeek · ${run.task} · ${run.id}`),
    section(state.join(' · ')),
    fields([
      ['Best vs baseline (counted)', [best ? `${fmtSpeedup(best.speedupVsBaseline)}${best.seq != null ? ` (eval #${best.seq}${best.fullSetCheck ? ', full-set check' : ''})` : ''}` : '—', quick].filter(Boolean).join(' · ')],
      ['Best vs strongest peer', vsPeer],
      ['Correctness', correctness(extras)],
      ['Target', `${fmtSpeedup(run.target)}`],
      ['Cost', `${fmtUsd(run.costUsd.used)} of ${fmtUsd(run.costUsd.budget)}`],
      ['Elapsed', `${fmtDuration(run.elapsedSeconds.used)} of ${fmtDuration(run.elapsedSeconds.budget)}`],
    ]),
  ];
  if (run.waitingFor && !run.finishedAt) {
    const when = run.waitingFor.deadline ? `; the bank asks at ${slackTime(run.waitingFor.deadline)} if nobody does` : '';
    blocks.push(section(`:raising_hand: Waiting for a question (${run.waitingFor.trigger})${when}.`));
  }
  if (run.error) blocks.push(section(`:warning: ${withMentions(escapeMrkdwn(capText(run.error, INLINE_TEXT_CHARS, '…').text))}`));
  const meta = [`Started by ${who(run.owner)}`, `model \`${escapeMrkdwn(run.model)}\``];
  if (run.arch) meta.push(`arch \`${escapeMrkdwn(run.arch)}\``);
  if (run.autonomous) meta.push('autonomous (the bank answers at once)');
  blocks.push(context(run.finishedAt ? meta.join(' · ') : `${meta.join(' · ')}\n${THREAD_HELP}`));
  const text = `${run.id} ${run.task}: ${s.label.toLowerCase()}, eval ${run.evaluations.used}/${run.evaluations.budget}, best ${best ? fmtSpeedup(best.speedupVsBaseline) : '—'} vs baseline`;
  return { text, blocks };
}

/** The thread's root while the run is being created (the run needs the thread to exist first). */
export function renderStartingCard(task: string, owner: string): SlackView {
  return {
    text: `Starting a KernelSeek run of ${task} for ${who(owner)}…`,
    blocks: [header(`KernelSeek · ${task}`), section(`:hourglass_flowing_sand: Starting a run of \`${task}\` for ${who(owner)}…`)],
  };
}

/** The thread's root when the run could not be created. */
export function renderStartFailedCard(task: string, owner: string, reason: string): SlackView {
  return {
    text: `Could not start a run of ${escapeMrkdwn(task)}: ${escapeMrkdwn(reason)}`,
    blocks: [header(`KernelSeek · ${task}`), section(`:x: Could not start a run of \`${escapeMrkdwn(task)}\` for ${who(owner)}: ${escapeMrkdwn(reason)}`)],
  };
}
