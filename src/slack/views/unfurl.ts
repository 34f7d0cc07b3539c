import type { Evaluation } from '../../db/index.js';
import type { RunView } from '../agent-port.js';
import { escapeMrkdwn } from '../poster/limits.js';
import type { KnownBlock } from './block-kit.js';
import { context, fields, fmtDuration, fmtSpeedup, fmtUsd, section, STATUS_LABEL, who } from './format.js';
import { mrkdwnLink } from './links.js';

/**
 * A run's link pasted anywhere unfurls into the run's state: status, best with its interval, goal,
 * evaluations, cost. As a Work Object (a `task` entity; its flexpane lists the evaluations) where
 * the workspace takes them, as plain blocks elsewhere.
 */

/** What an unfurl shows beyond the run view: the best's interval and the goal's reference. */
export interface RunFacts {
  run: RunView;
  /** The 95 % interval of the best's speedup vs the baseline, when its result has one. */
  bestInterval: [number, number] | null;
  /** The goal's reference: a peer's name, `baseline`, or null when the task is unknown. */
  goalVs: string | null;
  /** Finished evaluations, oldest first (the flexpane lists the last ones). */
  evaluations: Pick<Evaluation, 'seq' | 'status' | 'correct' | 'scenarios' | 'speedupVsBaseline' | 'result'>[];
  /** Link to the run's thread. */
  threadUrl: string | undefined;
  /** The owner's display name (plain-text fields cannot render a mention). */
  ownerName: string | undefined;
}

function bestText(f: RunFacts): string {
  if (!f.run.best) return 'no correct candidate yet';
  const ci = f.bestInterval ? ` (95 % ${fmtSpeedup(f.bestInterval[0])}–${fmtSpeedup(f.bestInterval[1])})` : '';
  return `${fmtSpeedup(f.run.best.speedupVsBaseline)} vs baseline${ci}`;
}

function goalText(f: RunFacts): string {
  return `${fmtSpeedup(f.run.target)}${f.goalVs ? ` vs ${escapeMrkdwn(f.goalVs)}` : ''}`;
}

function statusText(run: RunView): string {
  const s = STATUS_LABEL[run.status] ?? { emoji: '', label: run.status };
  return s.label;
}

/** The plain unfurl: blocks under the pasted link. */
export function renderRunUnfurlBlocks(f: RunFacts): KnownBlock[] {
  const { run } = f;
  const s = STATUS_LABEL[run.status] ?? { emoji: ':grey_question:', label: run.status };
  return [
    section(`${s.emoji} *KernelSeek run ${mrkdwnLink(f.threadUrl, run.id)}* · ${escapeMrkdwn(run.task)} · *${s.label}*`),
    fields([
      ['Best', bestText(f)],
      ['Goal', goalText(f)],
      ['Evaluations', `${run.evaluations.used} of ${run.evaluations.budget}`],
      ['Cost', `${fmtUsd(run.costUsd.used)} of ${fmtUsd(run.costUsd.budget)}`],
    ]),
    context(`Started by ${who(run.owner)} · ${fmtDuration(run.elapsedSeconds.used)} active`),
  ];
}

function evaluationItem(e: RunFacts['evaluations'][number]): string {
  if (e.status !== 'ok' || e.correct !== true) return `#${e.seq}: ${e.status}`;
  const ci = (e.result as { summary?: { speedup_vs_baseline_ci?: [number, number] | null } } | null)?.summary?.speedup_vs_baseline_ci;
  const interval = Array.isArray(ci) ? ` [${fmtSpeedup(ci[0])}–${fmtSpeedup(ci[1])}]` : '';
  return `#${e.seq}: ${fmtSpeedup(e.speedupVsBaseline)}${interval}${e.scenarios === 'quick' ? ' (quick set)' : ''}`;
}

const epoch = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/**
 * The Work Object: a `task` entity (@slack/types EntityMetadata). `detailed` adds the evaluations,
 * for the flexpane (entity.presentDetails), which is fetched each time someone opens it: live.
 */
export function renderRunEntity(f: RunFacts, urls: { unfurlUrl: string; pageUrl: string }, detailed = false): Record<string, unknown> {
  const { run } = f;
  const customFields: Record<string, unknown>[] = [
    { key: 'best', label: 'Best', type: 'string', value: bestText(f) },
    { key: 'goal', label: 'Goal', type: 'string', value: goalText(f) },
    { key: 'evaluations', label: 'Evaluations', type: 'string', value: `${run.evaluations.used} of ${run.evaluations.budget}` },
    { key: 'cost', label: 'Cost', type: 'string', value: `${fmtUsd(run.costUsd.used)} of ${fmtUsd(run.costUsd.budget)}` },
  ];
  if (f.threadUrl) customFields.push({ key: 'thread', label: 'Thread', type: 'slack#/types/link', value: f.threadUrl, link: f.threadUrl });
  if (detailed) {
    const done = f.evaluations.filter((e) => e.status !== 'pending' && e.seq != null).slice(-25);
    customFields.push({ key: 'history', label: `Evaluations (last ${done.length})`, type: 'array', item_type: 'string', value: done.map((e) => ({ value: evaluationItem(e) })) });
  }
  return {
    app_unfurl_url: urls.unfurlUrl,
    url: urls.pageUrl,
    external_ref: { id: run.id, type: 'kernelseek_run' },
    entity_type: 'slack#/entities/task',
    entity_payload: {
      attributes: {
        title: { text: `${run.task} · ${run.id}` },
        display_id: run.id,
        display_type: 'KernelSeek run',
        product_name: 'KernelSeek',
      },
      fields: {
        status: { value: statusText(run) },
        description: { value: `Best ${bestText(f)}; goal ${goalText(f)}.` },
        ...(f.ownerName ? { created_by: { type: 'string', value: f.ownerName } } : { created_by: { type: 'slack#/types/user', user: { user_id: run.owner } } }),
        date_created: { value: epoch(run.createdAt) },
        ...(run.finishedAt ? { date_updated: { value: epoch(run.finishedAt) } } : {}),
      },
      custom_fields: customFields,
      display_order: ['status', 'description', 'created_by', 'best', 'goal', 'evaluations', 'cost', ...(detailed ? ['history'] : [])],
    },
  };
}
