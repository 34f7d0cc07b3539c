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
  if (c.correct) return [`${subset}; on all ${c.scenarios}: correct, ${x(c.speedupVsBaseline)} vs baseline (counted)`];
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
    const b = summary.best;
    const peer = b.speedupVsBestPeer != null ? `, ${x(b.speedupVsBestPeer)} vs the strongest peer` : '';
    lines.push(
      // A quick run's best was chosen on the subset: its figures say so and are not counted.
      b.scenarioSet
        ? `  Best kernel on the quick subset: evaluation #${b.evaluationSeq}, ${x(b.speedupVsBaseline)} vs baseline${peer} (quick, ${b.scenarioSet.evaluated} of ${b.scenarioSet.total} scenarios: not counted)`
        : `  Best correct kernel: evaluation #${b.evaluationSeq}, ${x(b.speedupVsBaseline)} vs baseline${peer} (counted: every scenario)`,
      ...confirmationLines(summary.best),
      `    written to ${summary.best.file}`,
      // The history is not in the work tree: the engine keeps the git directory apart (workspace.ts).
      `    history: git --git-dir=${gitDirOf(runId, summary)} log --oneline ${summary.best.commit ?? 'best'} (every evaluated candidate is a commit; tags eval-<n> and best)`,
      `  Export it with its diff against the baseline and its evidence: ${summary.exportCommand ?? `kernelseek export ${runId}`}`,
    );
  } else {
    lines.push(`  No correct candidate beat the baseline; the workspace is ${summary.workspace}.`);
  }
  if (summary.best?.scenarioSet && !summary.counted) lines.push('  No counted result: nothing was measured correct on the full scenario set.');
  lines.push(
    `  ${summary.evaluations} evaluations, ${summary.steps} model steps, $${summary.costUsd.toFixed(4)}, ${summary.questions.human} question(s) from people and ${summary.questions.bank} from the bank, ${Math.round(summary.elapsedSeconds)} s active.`,
    `  Trace: kernelseek trace ${runId} --out ${runId}.jsonl`,
  );
  if (canReopen(summary)) {
    const how = summary.endReason === 'converged' || summary.endReason === 'no_evaluation' ? ' with a question' : summary.endReason === 'interrupted' ? '' : ' once that is fixed';
    lines.push(`  Continue it${how}: kernelseek run --resume ${runId}`);
  }
  return lines;
}

export interface TerminalReporterOptions {
  onDecision?: (prompt: string) => void;
  /**
   * `out` is a terminal: what the run is doing now (thinking, a command, an evaluation's stage with
   * its ETA, waiting for a question) is shown on one line rewritten in place every `tickMs`, so the
   * terminal is never silent for long, and erased before the next plain line. Off (a log file), an
   * evaluation's stages are plain lines and nothing ticks.
   */
  live?: boolean;
  /** Print each evaluation's whole result (intervals, verdicts, the per-scenario table), as `kernelseek show` does. */
  verbose?: boolean;
  /** How often the live line is redrawn (default 1 s). */
  tickMs?: number;
}

const SPINNER = ['|', '/', '-', '\\'];

/**
 * Progress for a terminal: one plain line per event that matters (tool calls, evaluations, new
 * bests, decision points, questions), so it reads the same on a TTY and in a log file; on a TTY,
 * a live line below them says what happens now.
 */
export function createTerminalReporter(out: Writable, options: TerminalReporterOptions = {}): RunReporter & { close(): void } {
  const started = Date.now();
  let liveShown = false;
  let frame = 0;
  // What the run does now, for the live line; null when it waits for nothing the terminal shows.
  // `still`: drawn once, not redrawn by the ticker (while a person may be typing a question: a
  // redraw would wipe what the terminal echoed of it, though what they type still arrives).
  let activity: { text: (seconds: number) => string; since: number; still?: boolean } | null = null;
  const eraseLive = (): void => {
    if (liveShown) out.write('\r\x1b[2K');
    liveShown = false;
  };
  const drawLive = (tick = false): void => {
    if (!options.live || !activity || (tick && activity.still && liveShown)) return;
    const width = (out as Writable & { columns?: number }).columns ?? 100;
    frame = (frame + 1) % SPINNER.length;
    const seconds = Math.floor((Date.now() - activity.since) / 1000);
    // Cut to the width: a line that wraps can no longer be erased with one carriage return.
    out.write(`\r\x1b[2K${`[${clock(started)}] ${SPINNER[frame]} ${activity.text(seconds)}`.slice(0, width - 1)}`);
    liveShown = true;
  };
  const doing = (text: ((seconds: number) => string) | null, still = false): void => {
    activity = text ? { text, since: Date.now(), still } : null;
    if (activity) drawLive();
    else eraseLive();
  };
  const line = (text: string): void => {
    eraseLive();
    out.write(`[${clock(started)}] ${text}\n`);
    drawLive();
  };
  const ticker = options.live ? setInterval(() => drawLive(true), options.tickMs ?? 1000) : undefined;
  ticker?.unref();
  let progress: { seq: number; tracker: ReturnType<typeof createProgressTracker>; stage: string } | undefined;
  let lastFatal: string | null = null;
  return {
    statusChanged: ({ run, from, to }) => {
      if (to !== 'running' && to !== 'queued') doing(null);
      line(from === to && run.waitingForWorker ? `status: ${to}, ${run.waitingForWorker}` : `status: ${to}`);
    },
    stepStarted: ({ step }) => doing((s) => `thinking (model step ${step + 1})… ${s} s`),
    stepFinished: () => doing(null),
    toolStarted: ({ name, summary }) => {
      line(`  ${summary}`);
      doing((s) => (name === 'evaluate' ? `evaluating: starting the harness, compiling… ${s} s` : `${name} running… ${s} s`));
    },
    evaluationProgress: ({ seq, progress: p }) => {
      if (progress?.seq !== seq) progress = { seq, tracker: createProgressTracker(), stage: '' };
      const current = progress;
      current.tracker.line(p);
      if (options.live) {
        doing(() => `evaluation #${seq}: ${current.tracker.line()}`);
        return;
      }
      // A log file: one line per stage, not one per scenario.
      const stage = current.tracker.stage();
      if (stage.name !== current.stage && stage.name !== 'done') {
        current.stage = stage.name;
        const what = stage.name === 'compiled' || stage.name === 'compile failed' ? (p.message ?? stage.name) : stage.name === 'correctness' ? `checking correctness on ${stage.of ?? '?'} scenarios` : stage.name === 'timing' ? `timing ${stage.of ?? '?'} scenarios` : (p.message ?? stage.name);
        line(`  evaluation #${seq}: ${what}`);
      }
    },
    evaluationFinished: ({ evaluation }) => {
      doing(null);
      line(evaluation.headline);
      // What the model reads first of a failure, the person reads too: the compiler's first errors,
      // the first failing scenarios (`kernelseek show <run> eval <n>` prints all of it).
      for (const l of evaluation.failure ?? []) out.write(`    | ${l}\n`);
      if (options.verbose && evaluation.details) out.write(`${evaluation.details.split('\n').map((l) => `    ${l}`).join('\n')}\n`);
      drawLive();
    },
    newBest: ({ evaluation, previousSpeedup }) =>
      line(
        `new best${evaluation.scenarioSet && evaluation.scenarioSet !== 'all' ? ' on the quick subset (not counted)' : ''}: evaluation #${evaluation.seq} at ${x(evaluation.speedupVsBaseline)} vs baseline (was ${x(previousSpeedup)})`,
      ),
    decisionPoint: ({ run, decision }) => {
      line(`decision point (${decision.trigger}): ${decision.reason}`);
      if (decision.deadline) {
        const deadline = decision.deadline.getTime();
        const seconds = Math.max(0, Math.round((deadline - Date.now()) / 1000));
        const prompt = `Type a question and press Enter within ${seconds} s (an empty line asks the question bank now; after the timeout the bank asks).`;
        line(prompt);
        options.onDecision?.(prompt);
        doing(() => `waiting for your question; the bank asks at ${new Date(deadline).toLocaleTimeString()}`, true);
      } else if (run.autonomous) line('autonomous: the question bank asks.');
    },
    questionAsked: ({ question }) => {
      doing(null);
      line(question.source === 'human' ? `question from ${question.author}: ${question.text}` : `question from the bank (${question.bankId}): ${question.text}`);
    },
    error: ({ message, fatal }) => {
      if (fatal) lastFatal = message;
      line(`${fatal ? 'error' : 'warning'}: ${message}`);
    },
    runFinished: ({ run, summary }) => {
      doing(null);
      if (ticker) clearInterval(ticker);
      // The reason was just printed as the error line: say it once.
      for (const l of summaryLines(run.id, summary.error === lastFatal ? { ...summary, error: null } : summary)) out.write(`${l}\n`);
    },
    close() {
      if (ticker) clearInterval(ticker);
      eraseLive();
    },
  };
}
