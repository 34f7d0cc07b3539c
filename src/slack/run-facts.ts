import type { SlackDeps } from './deps.js';
import type { RunFacts } from './views/unfurl.js';

const SLACK_USER = /^[UW][A-Z0-9]{2,}$/;

/**
 * What a run's unfurl and its Work Object's flexpane show, read now (the flexpane is fetched each
 * time it opens, so it is live): the run, its best's interval, the goal's reference, its evaluations,
 * a link to its thread and its owner's name. Undefined: no such run.
 */
export async function loadRunFacts(deps: Pick<SlackDeps, 'store' | 'control' | 'directory' | 'loadTasks'>, runId: string): Promise<RunFacts | undefined> {
  const row = await deps.store.runs.get(runId);
  if (!row) return undefined;
  const [run, evaluations, catalog] = await Promise.all([deps.control.getStatus(runId), deps.store.evaluations.forRun(runId), deps.loadTasks().catch(() => undefined)]);
  const best = run.best ? evaluations.find((e) => e.id === run.best!.evaluationId) : undefined;
  const ci = (best?.result as { summary?: { speedup_vs_baseline_ci?: unknown; best_peer?: unknown } } | null)?.summary;
  const interval = Array.isArray(ci?.speedup_vs_baseline_ci) && ci.speedup_vs_baseline_ci.length === 2 ? (ci.speedup_vs_baseline_ci as [number, number]) : null;
  const goal = catalog?.tasks.find((t) => t.task.name === run.task)?.task.goal;
  const peer = typeof ci?.best_peer === 'string' ? ci.best_peer : 'the strongest peer';
  const threadUrl = run.slack && deps.directory ? await deps.directory.permalink(run.slack.channel, run.slack.threadTs) : undefined;
  const ownerName = SLACK_USER.test(run.owner) ? await deps.directory?.userName(run.owner) : run.owner;
  return {
    run,
    bestInterval: interval,
    goalVs: goal ? (goal.vs === 'baseline' ? 'baseline' : peer) : null,
    evaluations: evaluations.filter((e) => e.status !== 'pending'),
    threadUrl,
    ownerName,
  };
}
