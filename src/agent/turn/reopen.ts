import { canReopen, CONVERGED, NO_EVALUATION, type Run } from '../../db/index.js';
import { parseRunState } from '../run-state.js';
import { describeRun } from '../run-view.js';
import { openDecisionCard } from './decision-step.js';
import type { EngineServices } from './services.js';

/**
 * Whether the end of `run` is still being written (finish.ts: a re-openable end marks the run
 * `ending` in the same statement that ends it, and clears the mark once its summary is out). A
 * re-opening then would be undone by the rest of the end: its decision cleared, its card closed.
 */
function isEnding(run: Pick<Run, 'state'>): boolean {
  return (run.state as { ending?: unknown } | null)?.ending !== undefined;
}

/**
 * Re-opens a run that may be continued (REOPENABLE). A converged one runs again from a decision
 * point that takes the person's pending question, or else a bank question at once. The wait since it
 * ended is not active time, and the stop streak starts again. Undefined when the run is not
 * converged, someone re-opened it first, or its end is still being written: then the end re-opens it
 * as its last step (a resume or a reply that lands meanwhile is kept, never lost).
 */
export async function reopenRun(services: EngineServices, run: Run): Promise<Run | undefined> {
  if (!canReopen(run)) return undefined;
  if (isEnding(run)) {
    if (await services.store.runs.requestReopen(run.id)) return undefined;
    // The end was settled in between: re-open the run as it is now.
    const settled = await services.store.runs.get(run.id);
    if (!settled || !canReopen(settled) || isEnding(settled)) return undefined;
    run = settled;
  }
  const now = services.now();
  const state = parseRunState(run.state);
  const idleMs = run.finishedAt ? Math.max(0, now.getTime() - run.finishedAt.getTime()) : 0;
  // A converged run re-opens at a decision point (a person's question, else the bank's); a run that
  // an account limit or the network stopped goes on exactly where it was.
  let decision = {};
  if (run.endReason === CONVERGED || run.endReason === NO_EVALUATION) {
    const card = await openDecisionCard({ store: services.store, run, state }, 'stopped', now);
    const what = run.endReason === CONVERGED ? 'converged' : 'ended for talking without evaluating';
    decision = {
      decision: { id: card.id, trigger: 'stopped', reason: `A person continued the run that ${what}.`, evidence: {}, at: now.toISOString(), deadline: null },
      decisionCount: card.seq,
    };
  }
  // The convergence streak and the request cap count afresh from here.
  const reopened = await services.store.runs.reopen(run, { ...decision, stopStreak: 0, stepsAtLastEval: run.stepsUsed, waitedMs: state.waitedMs + idleMs });
  if (!reopened) return undefined;
  await services.reporter.statusChanged({ run: describeRun(reopened, now), from: run.status, to: reopened.status });
  // The turn that ended the run may have left a finished job under its number: go on with the next.
  await services.store.agentRuns.advanceTurn(run.id, state.turn);
  await services.scheduler.schedule({ runId: run.id, turn: state.turn + 1 }, { delayMs: 0 });
  return (await services.store.runs.get(run.id)) ?? reopened;
}
