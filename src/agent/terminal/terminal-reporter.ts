import path from 'node:path';
import type { Writable } from 'node:stream';
import { canReopen } from '../../db/run-status.js';
import { createProgressTracker } from '../../harness/progress-tracker.js';
import type { RunReporter, RunSummary } from '../reporter.js';
import { describeEnd } from '../turn/budgets.js';

const x = (v: number | null | undefined) => (v == null ? '-' : `${v.toFixed(2)}x`);

function clock(startedAt: number): string {
  const s = Math.floor((Date.now() - startedAt) / 1000);
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

/** A quick run's best: the subset it was chosen on and what the full set said of it. */
function confirmationLines(best: NonNullable<RunSummary['best']>): string[] {
  if (!best.scenarioSet) return [];
  const subset = `    chosen on ${best.scenarioSet.evaluated} of ${best.scenarioSet.total} scenarios`;
  const c = best.confirmation;
  if (!c) return [`${subset}; not evaluated on the full set`];
  if (c.correct) return [`${subset}; on all ${c.scenarios}: correct, ${x(c.speedupVsBaseline)} vs baseline`];
  return [`${subset}; on all ${c.scenarios} it is NOT correct (${c.status}${c.reason ? `: ${c.reason}` : ''})`];
}

/** The run's git directory: `<data dir>/git/<run>`, beside `<data dir>/workspaces/<run>`. */
function gitDirOf(runId: string, summary: RunSummary): string {
  return summary.gitDir ?? path.join(path.dirname(path.dirname(summary.workspace)), 'git', runId);
}

/** The lines `kernelseek run` prints when a run ends: where the best kernel is and how to get the trace. */
export function summaryLines(runId: string, summary: RunSummary): string[] {
  const lines = [`Run ${runId} ${summary.status}: ${describeEnd(summary.endReason)}.`];
  if (summary.error && summary.status !== 'finished') lines.push(`  ${summary.error}`);
  if (summary.best) {
    lines.push(
      `  Best correct kernel: evaluation #${summary.best.evaluationSeq}, ${x(summary.best.speedupVsBaseline)} vs baseline${summary.best.speedupVsBestPeer != null ? `, ${x(summary.best.speedupVsBestPeer)} vs the strongest peer` : ''}`,
      ...confirmationLines(summary.best),
      `    written to ${summary.best.file}`,
      // The history is not in the work tree: the engine keeps the git directory apart (workspace.ts).
      `    history: git --git-dir=${gitDirOf(runId, summary)} log --oneline ${summary.best.commit ?? 'best'} (every evaluated candidate is a commit; tags eval-<n> and best)`,
      `  Export it with its diff against the baseline and its evidence: ${summary.exportCommand ?? `kernelseek export ${runId}`}`,
    );
  } else {
    lines.push(`  No correct candidate beat the baseline; the workspace is ${summary.workspace}.`);
  }
  lines.push(
    `  ${summary.evaluations} evaluations, ${summary.steps} model steps, $${summary.costUsd.toFixed(4)}, ${summary.questions.human} question(s) from people and ${summary.questions.bank} from the bank, ${Math.round(summary.elapsedSeconds)} s active.`,
    `  Trace: kernelseek trace ${runId} --out ${runId}.jsonl`,
  );
  if (canReopen(summary)) {
    const how = summary.endReason === 'converged' ? ' with a question' : summary.endReason === 'interrupted' ? '' : ' once that is fixed';
    lines.push(`  Continue it${how}: kernelseek run --resume ${runId}`);
  }
  return lines;
}

export interface TerminalReporterOptions {
  onDecision?: (prompt: string) => void;
  /**
   * `out` is a terminal: a running evaluation is shown on one line rewritten in place (elapsed,
   * scenarios done, ETA), erased before the next plain line. Off, nothing is shown until it ends:
   * a log file gets the evaluation's one-line headline, not a line per scenario.
   */
  live?: boolean;
}

/**
 * Progress for a terminal: one plain line per event that matters (tool calls, evaluations, new
 * bests, decision points, questions), so it reads the same on a TTY and in a log file.
 */
export function createTerminalReporter(out: Writable, options: TerminalReporterOptions = {}): RunReporter {
  const started = Date.now();
  let liveShown = false;
  const eraseLive = (): void => {
    if (liveShown) out.write('\r\x1b[2K');
    liveShown = false;
  };
  const line = (text: string): void => {
    eraseLive();
    out.write(`[${clock(started)}] ${text}\n`);
  };
  let progress: { seq: number; tracker: ReturnType<typeof createProgressTracker> } | undefined;
  let lastFatal: string | null = null;
  return {
    statusChanged: ({ run, from, to }) => line(from === to && run.waitingForWorker ? `status: ${to}, ${run.waitingForWorker}` : `status: ${to}`),
    stepFinished: () => {},
    toolStarted: ({ summary }) => line(`  ${summary}`),
    evaluationProgress: ({ seq, progress: p }) => {
      if (!options.live) return;
      if (progress?.seq !== seq) progress = { seq, tracker: createProgressTracker() };
      const width = (out as Writable & { columns?: number }).columns ?? 100;
      // Cut to the width: a line that wraps can no longer be erased with one carriage return.
      out.write(`\r\x1b[2K${`[${clock(started)}] evaluation #${seq}: ${progress.tracker.line(p)}`.slice(0, width - 1)}`);
      liveShown = true;
    },
    evaluationFinished: ({ evaluation }) => line(evaluation.headline),
    newBest: ({ evaluation, previousSpeedup }) => line(`new best: evaluation #${evaluation.seq} at ${x(evaluation.speedupVsBaseline)} vs baseline (was ${x(previousSpeedup)})`),
    decisionPoint: ({ run, decision }) => {
      line(`decision point (${decision.trigger}): ${decision.reason}`);
      if (decision.deadline) {
        const seconds = Math.max(0, Math.round((decision.deadline.getTime() - Date.now()) / 1000));
        const prompt = `Type a question and press Enter within ${seconds} s (an empty line asks the question bank now; after the timeout the bank asks).`;
        line(prompt);
        options.onDecision?.(prompt);
      } else if (run.autonomous) line('autonomous: the question bank asks.');
    },
    questionAsked: ({ question }) => line(question.source === 'human' ? `question from ${question.author}: ${question.text}` : `question from the bank (${question.bankId}): ${question.text}`),
    error: ({ message, fatal }) => {
      if (fatal) lastFatal = message;
      line(`${fatal ? 'error' : 'warning'}: ${message}`);
    },
    runFinished: ({ run, summary }) => {
      eraseLive();
      // The reason was just printed as the error line: say it once.
      for (const l of summaryLines(run.id, summary.error === lastFatal ? { ...summary, error: null } : summary)) out.write(`${l}\n`);
    },
  };
}
