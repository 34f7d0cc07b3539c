import { UserInputError } from '../core/errors.js';
import type { Evaluation, Question, Run, Store } from '../db/index.js';
import { describeEnd } from './turn/budgets.js';

/**
 * Continuing a run (`/kernelseek continue`, `fork`, `kernelseek run --from`): the new run starts from
 * its parent's best kernel, and its first message carries the parent's history in a few lines — what
 * was evaluated, the best with its interval, the questions asked and what followed each — so the
 * agent neither repeats the parent's dead ends nor starts from the baseline.
 */

/** How much of the parent's history the summary carries (the brief stays a few kilobytes). */
const MAX_EVALUATIONS = 40;
const MAX_QUESTIONS = 12;
const MAX_QUESTION_CHARS = 300;

export interface ParentRun {
  run: Run;
  best: Evaluation;
}

/** The run to continue and its best kernel, or a UserInputError that says what to do instead. */
export async function loadParentRun(store: Store, parentId: string, task: string): Promise<ParentRun> {
  const run = await store.runs.get(parentId);
  if (!run) throw new UserInputError(`There is no run '${parentId}' to continue.`, { code: 'run_unknown' });
  if (run.task !== task) {
    throw new UserInputError(`${parentId} is a run of ${run.task}, not ${task}: a continuation optimises the same task.`, { code: 'parent_task_mismatch' });
  }
  const best = run.bestEvaluationId != null ? await store.evaluations.get(run.bestEvaluationId) : undefined;
  if (!best || best.speedupVsBaseline == null) {
    throw new UserInputError(`${parentId} has no correct kernel to continue from (nothing it evaluated was correct on every scenario). Start a new run of ${run.task} instead.`, {
      code: 'parent_without_best',
    });
  }
  return { run, best };
}

function fmt(x: number | null | undefined): string {
  return x == null || !Number.isFinite(x) ? '—' : `${x.toFixed(x >= 10 ? 1 : 3)}x`;
}

/** The 95 % interval of an evaluation's speedup vs the baseline, when its result has one. */
export function baselineInterval(e: Pick<Evaluation, 'result'>): [number, number] | null {
  const ci = (e.result as { summary?: { speedup_vs_baseline_ci?: unknown } } | null)?.summary?.speedup_vs_baseline_ci;
  return Array.isArray(ci) && ci.length === 2 && ci.every((v) => typeof v === 'number' && Number.isFinite(v)) ? [ci[0] as number, ci[1] as number] : null;
}

function evaluationLine(e: Evaluation, bestId: number): string {
  const mark = e.id === bestId ? ' (best)' : '';
  if (e.status !== 'ok' || e.correct !== true) return `#${e.seq}: ${e.status}${mark}`;
  const ci = baselineInterval(e);
  return `#${e.seq}: ${fmt(e.speedupVsBaseline)}${ci ? ` [${fmt(ci[0])}–${fmt(ci[1])}]` : ''}${e.scenarios === 'quick' ? ' (quick set)' : ''}${mark}`;
}

function questionLine(q: Question): string {
  const who = q.source === 'bank' ? `the bank (${q.bankId ?? '?'})` : `a person (${q.author})`;
  const text = q.text.length > MAX_QUESTION_CHARS ? `${q.text.slice(0, MAX_QUESTION_CHARS - 1)}…` : q.text;
  const after =
    q.gain != null && q.bestBefore != null
      ? ` → best ${fmt(q.bestBefore)} → ${fmt(q.bestAfter)} in the next ${q.evalsAfter} evaluation(s)`
      : q.evalsAfter > 0
        ? ` → no new best in the next ${q.evalsAfter} evaluation(s)`
        : '';
  return `- after eval #${q.evalSeqAtAsk}, ${who}: "${text.replace(/\s+/g, ' ')}"${after}`;
}

/** The parent's history, for the first message of the run that continues it. */
export async function summariseParent(store: Store, parent: ParentRun): Promise<string> {
  const { run, best } = parent;
  const [evaluations, questions] = await Promise.all([store.evaluations.forRun(run.id), store.questions.forRun(run.id)]);
  const done = evaluations.filter((e) => e.status !== 'pending' && e.seq != null && e.seq > 0);
  const shown = done.length > MAX_EVALUATIONS ? done.slice(-MAX_EVALUATIONS) : done;
  if (!shown.some((e) => e.id === best.id) && done.some((e) => e.id === best.id)) shown.unshift(best);
  const asked = questions.filter((q) => q.deliveredAt).slice(-MAX_QUESTIONS);
  const ci = baselineInterval(best);
  const end = run.endReason ? `${run.status} (${describeEnd(run.endReason)})` : run.status;
  const lines = [
    `This run continues run ${run.id}${run.parentRunId ? ` (itself a continuation of ${run.parentRunId})` : ''}: ${end} after ${run.evalsUsed} evaluation(s) and ${run.stepsUsed} model step(s), target ${fmt(run.target)}.`,
    `The workspace starts from its best kernel, eval #${best.seq}: ${fmt(best.speedupVsBaseline)} vs the baseline${ci ? ` (95 % interval ${fmt(ci[0])}–${fmt(ci[1])})` : ''}${best.speedupVsBestPeer != null ? `, ${fmt(best.speedupVsBestPeer)} vs the strongest peer` : ''}${best.scenarios === 'quick' ? ' on the quick subset (not measured on every scenario)' : ''}.`,
    `Its evaluations (${done.length}${done.length > shown.length ? `, the last ${MAX_EVALUATIONS} and the best shown` : ''}; speedup vs the baseline with its 95 % interval): ${shown.map((e) => evaluationLine(e, best.id)).join(' · ') || 'none'}.`,
  ];
  if (asked.length > 0) lines.push(`Questions asked in it, and what followed:`, ...asked.map(questionLine));
  lines.push(`Its workspace history is not here: this workspace starts with one commit, the best kernel of ${run.id}.`);
  return lines.join('\n');
}
