import { createHash } from 'node:crypto';
import path from 'node:path';
import { AppError } from '../../core/errors.js';
import type { Evaluation, EvaluationOutcome as StoredOutcome } from '../../db/index.js';
import { decodeCandidate, encodeCandidate } from '../../harness/candidate.js';
import { speedupVsBestPeer } from '../../harness/result.js';
import type { EvaluationOutcome } from '../../queue/dispatcher.js';
import { BASELINE_SPEEDUP, beatsIncumbent, gainFiguresOf } from '../../harness/significance.js';
import { expandScenarios } from '../../harness/tasks.js';
import { formatEvaluationForModel, isCorrectCandidate, reportOf } from '../evaluation/summary.js';
import { recordCountedBest } from '../counted.js';
import { describeRun } from '../run-view.js';
import { checkWorkspaceSize, commitWorkspace, tagCommit } from '../workspace/workspace.js';
import { layoutOf, readWorkspaceCandidate } from './candidate-files.js';
import { storableValue } from './output-cap.js';
import { shownPath, ToolInputError } from './paths.js';
import { WorkspaceFileError } from '../../core/safe-read.js';
import type { ToolContext, ToolResult } from './tool-types.js';

/** Whether an evaluation on `requested` can be the run's best (its own scenario set, or all of them). */
function counts(requested: string, runScenarios: string): boolean {
  return requested === 'all' || requested === runScenarios;
}

/** Maps the dispatcher's outcome onto the evaluations row. */
export function storedOutcome(outcome: EvaluationOutcome): StoredOutcome {
  if (outcome.status === 'harness_error') {
    return {
      status: 'error',
      correct: false,
      speedupVsBaseline: null,
      speedupVsBestPeer: null,
      result: storableValue({ message: outcome.message, stderrTail: outcome.stderrTail }),
      gpu: outcome.gpu,
      arch: null,
      worker: outcome.worker,
      harnessSeconds: outcome.wallSeconds,
      startedAt: null,
    };
  }
  const r = outcome.result;
  return {
    status: outcome.status,
    correct: r.correct,
    speedupVsBaseline: r.summary.speedup_vs_baseline_geomean,
    speedupVsBestPeer: speedupVsBestPeer(r),
    // A candidate's own words (errors, prints) travel in the result: no NUL may reach jsonb.
    result: storableValue(r as unknown as Record<string, unknown>),
    gpu: outcome.gpu ?? r.gpu ?? null,
    arch: r.arch ?? null,
    worker: outcome.worker,
    harnessSeconds: outcome.wallSeconds,
    startedAt: null,
  };
}

/**
 * The `evaluate` tool: submits the workspace's kernel (its file, or every source of its folder) to the harness through the Dispatcher,
 * stores the evaluation, commits the candidate, offers it as the run's best and returns a compact
 * summary. Re-executing the same tool call (after a crash) reuses its evaluation number, hence its
 * job id: the candidate is never evaluated twice.
 */
export async function runEvaluateTool(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const { run, task, workspace, store } = ctx;
  const runScenarios = ((run.state as { scenarios?: 'quick' | 'all' }).scenarios ?? 'all') as 'quick' | 'all';
  const requested = input.scenarios ?? runScenarios;
  if (requested !== 'quick' && requested !== 'all') throw new ToolInputError('`scenarios` must be "quick" or "all"');
  const layout = layoutOf(task, workspace);
  const where = shownPath(workspace.dir, path.join(workspace.dir, layout.name), ctx.config.agent.sandbox.mode === 'on');
  // Beneath the workspace, no symlink followed, regular files under the job's source cap, text.
  const files = await readWorkspaceCandidate(workspace, layout).catch((error: unknown) => {
    if ((error instanceof WorkspaceFileError && error.missing) || (error as NodeJS.ErrnoException).code === 'ENOENT') throw new ToolInputError(`the kernel file ${where} does not exist; create it (the task evaluates exactly this file)`);
    if (error instanceof WorkspaceFileError) throw new ToolInputError(error.userMessage);
    if (error instanceof AppError) throw new ToolInputError(`the kernel folder ${where}/: ${error.userMessage}`);
    throw error;
  });
  if (Object.values(files).every((text) => text.trim() === '')) throw new ToolInputError(`the kernel ${layout.folder ? 'folder' : 'file'} ${where} is empty`);
  // What is stored and sent: one file's text, or the folder's files as one document.
  const source = encodeCandidate(files, layout);

  const pathEnv = ctx.config.agent.bash.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
  const maxBytes = ctx.config.agent.sandbox.workspaceMaxMb * 2 ** 20;
  // Before the evaluation is spent: a workspace that cannot be committed is refused up front.
  await checkWorkspaceSize(workspace, maxBytes, pathEnv);
  const reserved = (run.state as { toolSeqs?: Record<string, { evalSeq?: number }> }).toolSeqs?.[ctx.toolUseId]?.evalSeq;
  if (reserved === undefined && run.evalsUsed >= run.budgetEvals) {
    return { content: `The run's evaluation budget (${run.budgetEvals}) is used up; this candidate was not evaluated.`, isError: true };
  }
  const seq = await store.agentRuns.reserveEvaluationSeq(run.id, ctx.toolUseId);
  const jobId = `eval:${run.id}:${seq}`;
  const arch = task.task.device === 'cuda' ? (run.arch ?? task.task.architectures[0]) : undefined;
  let evaluation: Evaluation = await store.evaluations.createPending({
    runId: run.id,
    seq,
    task: task.task.name,
    jobId,
    candidateHash: createHash('sha256').update(source).digest('hex'),
    source,
    scenarios: requested,
    arch: arch ?? null,
  });
  // The run as it stands (a turn's earlier evaluation may have moved its best); nothing else changes
  // its best while this evaluation runs.
  const previous = await store.runs.get(run.id);
  if (evaluation.status === 'pending') {
    // The source of a re-executed call is the one first submitted (the row's), not the file now.
    const during = describeRun(run);
    // The run's best so far is timed beside the candidate: a new best is decided on that comparison
    // (src/harness/significance.ts), on the run's own scenario set.
    const incumbent = counts(requested, runScenarios) && previous?.bestEvaluationId != null ? (await store.evaluations.get(previous.bestEvaluationId))?.source : undefined;
    const candidate = layout.folder ? { files: decodeCandidate(evaluation.source, layout) } : { source: evaluation.source };
    const best = incumbent === undefined ? {} : layout.folder ? { incumbentFiles: decodeCandidate(incumbent, layout) } : { incumbent };
    const outcome = await ctx.dispatcher.evaluate(
      { task: task.task.name, ...candidate, fileName: task.task.kernel.file, scenarios: requested, arch, runId: run.id, seq, ...best },
      // Not awaited: the harness's output is read on; the reporter is guarded and never throws.
      { signal: ctx.signal, onProgress: (progress) => void ctx.reporter.evaluationProgress({ run: during, seq, progress }) },
    );
    evaluation = await store.evaluations.complete(evaluation.id, storedOutcome(outcome));
  }

  const correct = isCorrectCandidate(evaluation) && counts(requested, runScenarios);
  const headline = reportOf(evaluation, null).headline;
  const commit = await commitWorkspace(workspace, `${headline}${correct ? '' : ' (not counted)'}\n\nevaluation id ${evaluation.id}, job ${jobId}`, pathEnv, maxBytes);
  await tagCommit(workspace, `eval-${seq}`, commit, pathEnv);
  let newBest = false;
  // Better than the incumbent by the harness's interval, not by noise (src/harness/significance.ts).
  if (correct && evaluation.speedupVsBaseline != null && beatsIncumbent(gainFiguresOf(evaluation), previous?.bestSpeedup ?? BASELINE_SPEEDUP)) {
    newBest = await store.runs.offerBest(run.id, evaluation.id, evaluation.speedupVsBaseline, evaluation.speedupVsBestPeer);
    if (newBest) await tagCommit(workspace, 'best', commit, pathEnv);
  }
  // The counted best the status card, `runs` and the summary show (src/harness/counted-best.ts); the
  // request cap counts model requests from here (run-turn.ts).
  const current = (await store.runs.get(run.id))!;
  await store.agentRuns.patchState(run.id, { stepsAtLastEval: current.stepsUsed });
  const after = (await recordCountedBest(store, current)).run ?? (await store.runs.get(run.id))!;
  const bestEval = after.bestEvaluationId != null ? await store.evaluations.get(after.bestEvaluationId) : undefined;
  const report = reportOf(evaluation, commit);
  const view = describeRun(after);
  await ctx.reporter.evaluationFinished({ run: view, evaluation: report });
  if (newBest) await ctx.reporter.newBest({ run: view, evaluation: report, previousSpeedup: previous?.bestSpeedup ?? null });
  return {
    content: formatEvaluationForModel({
      evaluation,
      task: task.task,
      newBest,
      best: bestEval ? { seq: bestEval.seq ?? 0, speedup: bestEval.speedupVsBaseline } : null,
      commit,
      budget: { used: after.evalsUsed, total: after.budgetEvals },
      counts: counts(requested, runScenarios),
      // A quick run's best is the best on its subset: said wherever the best appears.
      scenarioSet: runScenarios === 'quick' ? { evaluated: task.task.scenarios.quick.length, total: expandScenarios(task.task).length } : null,
    }),
    isError: false,
    evaluation: { id: evaluation.id, seq, newBest },
  };
}
