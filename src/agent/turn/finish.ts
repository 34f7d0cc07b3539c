import { describeError } from '../../core/errors.js';
import { canReopen, type Run, type RunStatus } from '../../db/index.js';
import { decodeCandidate, type CandidateFiles } from '../../harness/candidate.js';
import { expandScenarios, findTask } from '../../harness/tasks.js';
import type { FullSetConfirmation, RunSummary } from '../reporter.js';
import { recordCountedBest } from '../counted.js';
import { activeSeconds, countedBestOfRun, describeRun } from '../run-view.js';
import { exportBest, removeRunHome, workspacePaths } from '../workspace/workspace.js';
import { reopenRun } from './reopen.js';
import { transitionRun, type EngineServices } from './services.js';

/** The final summary: the best correct candidate (written out as a file), usage and questions. */
export async function summarizeRun(services: EngineServices, run: Run): Promise<RunSummary> {
  const [questions, best] = await Promise.all([
    services.store.questions.forRun(run.id),
    run.bestEvaluationId != null ? services.store.evaluations.get(run.bestEvaluationId) : Promise.resolve(undefined),
  ]);
  let bestSummary: RunSummary['best'] = null;
  if (best && best.speedupVsBaseline != null) {
    let kernelFile = 'kernel.src';
    let kept: string | CandidateFiles = best.source;
    let scenarioSet: { evaluated: number; total: number } | null = null;
    try {
      const loaded = await findTask(services.config.core.tasksDir, run.task);
      const task = loaded.task;
      kernelFile = task.kernel.file;
      // A folder kernel is written out as its folder of files.
      if (loaded.layout.folder) kept = decodeCandidate(best.source, loaded.layout);
      if (best.scenarios === 'quick') scenarioSet = { evaluated: task.scenarios.quick.length, total: expandScenarios(task).length };
    } catch {
      // The task may have been removed since; the source is still worth keeping.
    }
    const file = await exportBest(services.config.core.dataDir, run.id, kernelFile, kept);
    bestSummary = {
      evaluationSeq: best.seq ?? 0,
      speedupVsBaseline: best.speedupVsBaseline,
      speedupVsBestPeer: best.speedupVsBestPeer,
      file,
      commit: `eval-${best.seq}`,
      scenarioSet,
      confirmation: ((run.state as { confirmation?: FullSetConfirmation }).confirmation ?? null),
    };
  }
  const delivered = questions.filter((q) => q.deliveredAt);
  const counted = countedBestOfRun(run);
  return {
    status: run.status,
    endReason: run.endReason,
    best: bestSummary,
    counted: counted ? { seq: counted.seq, speedupVsBaseline: counted.speedupVsBaseline, speedupVsBestPeer: counted.speedupVsBestPeer, fullSetCheck: counted.fullSetCheck === true } : null,
    evaluations: run.evalsUsed,
    steps: run.stepsUsed,
    costUsd: run.costUsd,
    questions: { human: delivered.filter((q) => q.source === 'human').length, bank: delivered.filter((q) => q.source === 'bank').length },
    elapsedSeconds: Math.round(activeSeconds(run, services.now())),
    workspace: workspacePaths(services.config.core.dataDir, run.id).dir,
    gitDir: workspacePaths(services.config.core.dataDir, run.id).gitDir,
    exportCommand: `kernelseek export ${run.id}`,
    error: run.error,
  };
}

/**
 * Ends a run (finished, stopped or failed) and tells the reporter, in that order, whatever fails in
 * between: the status card always shows the final state.
 */
export async function endRun(
  services: EngineServices,
  run: Run,
  status: Extract<RunStatus, 'finished' | 'stopped' | 'failed'>,
  endReason: string,
  error: string | null = null,
): Promise<Run> {
  // An end a person may continue from is marked `ending` in the same statement, until its summary
  // is out: a resume or a reply meanwhile is kept for the end to act on (reopen.ts), not undone by it.
  const reopenable = canReopen({ status, endReason });
  const moved = await transitionRun(services, run, status, { endReason, ...(error ? { error } : {}) }, reopenable ? { ending: true } : undefined);
  const final = moved ?? (await services.store.runs.get(run.id)) ?? run;
  if (!moved) return final; // someone else ended it (and reported it)
  try {
    return await writeEnd(services, run, status, final);
  } finally {
    if (reopenable && (await services.store.runs.settleEnd(run.id))) {
      const latest = await services.store.runs.get(run.id);
      if (latest) await reopenRun(services, latest);
    }
  }
}

/** The rest of an end, once the run is in its final state: the HOME, the decision, the summary. */
async function writeEnd(services: EngineServices, run: Run, status: RunStatus, final: Run): Promise<Run> {
  if (!services.config.agent.sandbox.keepHomes) {
    await removeRunHome(services.config.core.dataDir, run.id).catch((e: unknown) => services.logger.warn({ err: e, runId: run.id }, 'could not remove the run\'s HOME'));
  }
  // The decision point, if any, is over; its wait counts as waiting.
  const decisionAt = (final.state as { decision?: { at?: string } | null }).decision?.at;
  const waited = Number((final.state as { waitedMs?: number }).waitedMs ?? 0);
  const patch = decisionAt ? { decision: null, waitedMs: waited + Math.max(0, (final.finishedAt ?? services.now()).getTime() - Date.parse(decisionAt)) } : { decision: null };
  let patched = (await services.store.agentRuns.patchState(run.id, patch)) ?? final;
  await services.store.decisionCards.closeOpen(run.id, 'run_ended', final.finishedAt ?? services.now());
  // Finished runs only: a stop asks for a quick end (the summary then says the full set was not run).
  if (status === 'finished') patched = await confirmOnFullSet(services, patched);
  // The counted best as it stands at the end (the full-set check of a quick run's best included).
  patched = (await recordCountedBest(services.store, patched).catch(() => ({ run: undefined }))).run ?? patched;
  try {
    const summary = await summarizeRun(services, patched);
    await services.reporter.runFinished({ run: describeRun(patched, services.now()), summary });
  } catch (e) {
    services.logger.error({ err: e, runId: run.id }, 'could not summarise the finished run');
  }
  return patched;
}

/**
 * A run on the quick subset chose its best on a few scenarios: before its summary calls that kernel
 * correct, it is evaluated once on every scenario (job `eval:<run>:0`, outside the run's budget) and
 * the outcome kept in the run's state, so a summary shown again says the same.
 */
async function confirmOnFullSet(services: EngineServices, run: Run): Promise<Run> {
  if (run.bestEvaluationId == null || (run.state as { confirmation?: unknown }).confirmation) return run;
  const best = await services.store.evaluations.get(run.bestEvaluationId);
  if (!best || best.scenarios !== 'quick') return run;
  let confirmation: FullSetConfirmation;
  try {
    const loaded = await findTask(services.config.core.tasksDir, run.task);
    const task = loaded.task;
    const total = expandScenarios(task).length;
    const outcome = await services.dispatcher.evaluate({
      task: task.name,
      ...(loaded.layout.folder ? { files: decodeCandidate(best.source, loaded.layout) } : { source: best.source }),
      fileName: task.kernel.file,
      scenarios: 'all',
      arch: best.arch ?? undefined,
      runId: run.id,
      seq: 0,
    });
    if (outcome.status === 'harness_error') {
      confirmation = { status: 'error', correct: false, speedupVsBaseline: null, scenarios: total, reason: outcome.message };
    } else {
      const r = outcome.result;
      const failing = r.scenarios.find((sc) => sc.status !== 'ok');
      const peer = r.summary.best_peer;
      confirmation = {
        status: outcome.status,
        correct: r.correct,
        speedupVsBaseline: r.summary.speedup_vs_baseline_geomean,
        // What the counted best reads of it (src/harness/counted-best.ts).
        speedupVsBestPeer: peer ? (r.summary.speedup_vs_peer_geomean[peer] ?? null) : null,
        ci: r.summary.speedup_vs_baseline_ci ?? null,
        verdict: r.summary.verdict_vs_baseline ?? null,
        ofSeq: best.seq,
        scenarios: total,
        reason: r.correct ? null : failing ? `${failing.id}: ${failing.reason ?? failing.status}` : (r.messages[0] ?? null),
      };
    }
  } catch (error) {
    confirmation = { status: 'error', correct: false, speedupVsBaseline: null, scenarios: 0, reason: describeError(error) };
  }
  services.logger.info({ runId: run.id, confirmation }, 'the best, evaluated on the full set');
  return (await services.store.agentRuns.patchState(run.id, { confirmation })) ?? run;
}
