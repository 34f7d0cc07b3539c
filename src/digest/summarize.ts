import type {
  DigestEvaluationRow,
  DigestQuestionRow,
  DigestRunRow,
  DigestStepUsageRow,
  PreviousBestRow,
} from '../db/repositories/digest-figures.js';
import { countedBest, countedBestSteps, fullSetCheckOf, isCounted } from '../harness/counted-best.js';
import type { DigestBest, DigestFigures, DigestQuestion, DigestRun, DigestTask } from './figures.js';
import type { DigestWindow } from './window.js';

/** Everything the digest reads from the store for one window (see computeDigest). */
export interface DigestRows {
  runs: DigestRunRow[];
  /** Evaluations that finished in the window. */
  evaluations: DigestEvaluationRow[];
  previousBests: PreviousBestRow[];
  stepUsage: DigestStepUsageRow[];
  questionsAsked: Pick<DigestQuestionRow, 'id' | 'source' | 'author'>[];
  /** Questions after which the best rose. */
  gainQuestions: DigestQuestionRow[];
  /**
   * Every finished evaluation of the runs alive in the window and of the questions' runs: a run's
   * counted best is decided over its whole history (src/harness/counted-best.ts).
   */
  runEvaluations: DigestEvaluationRow[];
}

export interface SummarizeOptions {
  /** How many of the questions that preceded the largest gains to list. */
  topQuestions?: number;
}

const TERMINAL = new Set(['finished', 'stopped', 'failed']);
const finite = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);
const keyOf = (task: string, arch: string | null) => `${task}\u0000${arch ?? ''}`;
const sumOf = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** Counts for a best: ok, correct on every scenario of the full set, a real speedup (src/harness/counted-best.ts). */
export const countsForBest: (e: Pick<DigestEvaluationRow, 'status' | 'correct' | 'scenarios' | 'speedupVsBaseline'>) => boolean = isCounted;

/** Each run's finished evaluations, by run id, in seq order. */
function historiesOf(rows: Pick<DigestRows, 'runEvaluations'>): Map<string, DigestEvaluationRow[]> {
  const byRun = new Map<string, DigestEvaluationRow[]>();
  for (const e of rows.runEvaluations) {
    if (!e.runId || e.seq == null) continue;
    const list = byRun.get(e.runId) ?? [];
    list.push(e);
    byRun.set(e.runId, list);
  }
  for (const list of byRun.values()) list.sort((a, b) => a.seq! - b.seq!);
  return byRun;
}

/** What a run's history had finished by the window's end. */
const finishedBy = (history: DigestEvaluationRow[] | undefined, to: Date) => (history ?? []).filter((e) => e.finishedAt < to);

function stateAtEnd(run: DigestRunRow, window: DigestWindow): DigestRun['state'] {
  if (!TERMINAL.has(run.status)) return 'active';
  // A run that ended after this window closed was still active at its end.
  if (run.finishedAt && run.finishedAt >= window.to) return 'active';
  return run.status as DigestRun['state'];
}

function summarizeRuns(rows: DigestRows, window: DigestWindow, histories: Map<string, DigestEvaluationRow[]>): DigestFigures['runs'] {
  const evalsByRun = new Map<string, number>();
  for (const e of rows.evaluations) if (e.runId) evalsByRun.set(e.runId, (evalsByRun.get(e.runId) ?? 0) + 1);
  const costByRun = new Map(rows.stepUsage.map((u) => [u.runId, u.costUsd]));
  const list: DigestRun[] = rows.runs.map((r) => {
    // The run's counted best as of the window's end (a quick run's full-set check once it has ended).
    const ended = r.finishedAt !== null && r.finishedAt < window.to;
    const best = countedBest(finishedBy(histories.get(r.id), window.to), { fullSetCheck: ended ? fullSetCheckOf(r.confirmation) : null });
    return {
      id: r.id,
      task: r.task,
      arch: r.arch,
      owner: r.owner,
      state: stateAtEnd(r, window),
      status: r.status,
      endReason: r.endReason,
      startedInWindow: r.createdAt >= window.from,
      bestSpeedup: best?.speedupVsBaseline ?? null,
      bestSpeedupVsPeer: best?.speedupVsBestPeer ?? null,
      evaluations: evalsByRun.get(r.id) ?? 0,
      costUsd: costByRun.get(r.id) ?? 0,
      slackChannel: r.slackChannel,
      slackThreadTs: r.slackThreadTs,
    };
  });
  // Live runs first; then the best results first, so a truncated list keeps what matters.
  list.sort(
    (a, b) =>
      Number(a.state !== 'active') - Number(b.state !== 'active') ||
      (b.bestSpeedup ?? -Infinity) - (a.bestSpeedup ?? -Infinity) ||
      a.id.localeCompare(b.id),
  );
  const n = (state: DigestRun['state']) => list.filter((r) => r.state === state).length;
  return {
    started: list.filter((r) => r.startedInWindow).length,
    active: n('active'),
    finished: n('finished'),
    stopped: n('stopped'),
    failed: n('failed'),
    list,
  };
}

/**
 * The counted bests the window reached: every step of a run's counted best (src/harness/counted-best.ts)
 * whose evaluation finished in the window, with the row it stands for.
 */
function windowSteps(histories: Map<string, DigestEvaluationRow[]>, window: DigestWindow): DigestEvaluationRow[] {
  const out: DigestEvaluationRow[] = [];
  for (const history of histories.values()) {
    const done = finishedBy(history, window.to);
    for (const step of countedBestSteps(done)) {
      const row = done.find((e) => e.seq === step.seq);
      if (row && row.finishedAt >= window.from) out.push(row);
    }
  }
  return out;
}

function bestOf(steps: DigestEvaluationRow[]): DigestBest | null {
  let best: DigestEvaluationRow | undefined;
  for (const e of steps) {
    // Ties go to the earlier candidate: it got there first.
    if (!best || e.speedupVsBaseline! > best.speedupVsBaseline! || (e.speedupVsBaseline === best.speedupVsBaseline && e.finishedAt < best.finishedAt)) best = e;
  }
  if (!best) return null;
  return {
    speedupVsBaseline: best.speedupVsBaseline!,
    speedupVsPeer: finite(best.speedupVsBestPeer) ? best.speedupVsBestPeer : null,
    peer: best.bestPeer,
    runId: best.runId!,
    evaluationId: best.id,
    seq: best.seq,
    at: best.finishedAt.toISOString(),
  };
}

function progressOf(steps: DigestEvaluationRow[], previousBest: number | null): DigestTask['progress'] {
  let best = previousBest ?? 1;
  const out: DigestTask['progress'] = [];
  for (const e of [...steps].sort((a, b) => a.finishedAt.getTime() - b.finishedAt.getTime() || a.id - b.id)) {
    if (!(e.speedupVsBaseline! > best)) continue;
    best = e.speedupVsBaseline!;
    out.push({ at: e.finishedAt.toISOString(), speedup: best });
  }
  return out;
}

function summarizeTasks(rows: DigestRows, steps: DigestEvaluationRow[]): DigestTask[] {
  const runArch = new Map(rows.runs.map((r) => [r.id, r.arch]));
  const lines = new Map<string, { task: string; arch: string | null; evals: DigestEvaluationRow[]; runs: Set<string>; costUsd: number }>();
  const lineFor = (task: string, arch: string | null) => {
    const key = keyOf(task, arch);
    let line = lines.get(key);
    if (!line) lines.set(key, (line = { task, arch, evals: [], runs: new Set(), costUsd: 0 }));
    return line;
  };
  // Ad-hoc evaluations (no run) count in the totals, not in the agent's per-task results.
  const evalArchByRun = new Map<string, string | null>();
  for (const e of rows.evaluations) {
    if (!e.runId) continue;
    const line = lineFor(e.task, e.arch);
    line.evals.push(e);
    line.runs.add(e.runId);
    if (!evalArchByRun.has(e.runId)) evalArchByRun.set(e.runId, e.arch);
  }
  // A run's model cost goes to the line its evaluations are on (its arch), else to its own arch.
  for (const u of rows.stepUsage) {
    const arch = evalArchByRun.has(u.runId) ? evalArchByRun.get(u.runId)! : (runArch.get(u.runId) ?? null);
    const line = lineFor(u.task, arch);
    line.costUsd += u.costUsd;
    line.runs.add(u.runId);
  }
  const previous = new Map(rows.previousBests.map((p) => [keyOf(p.task, p.arch), p.best]));
  return [...lines.values()]
    .map((l) => {
      const previousBest = previous.get(keyOf(l.task, l.arch)) ?? null;
      const lineSteps = steps.filter((e) => e.task === l.task && e.arch === l.arch);
      return {
        task: l.task,
        arch: l.arch,
        runs: l.runs.size,
        evaluations: l.evals.length,
        correct: l.evals.filter(countsForBest).length,
        best: bestOf(lineSteps),
        previousBest,
        progress: progressOf(lineSteps, previousBest),
        harnessSeconds: sumOf(l.evals.map((e) => e.harnessSeconds ?? 0)),
        costUsd: l.costUsd,
      };
    })
    .sort((a, b) => a.task.localeCompare(b.task) || (a.arch ?? '').localeCompare(b.arch ?? '', 'en', { numeric: true }));
}

function summarizeEvaluations(rows: DigestRows): DigestFigures['evaluations'] {
  const byStatus: Record<string, number> = {};
  for (const e of rows.evaluations) byStatus[e.status] = (byStatus[e.status] ?? 0) + 1;
  return {
    total: rows.evaluations.length,
    correct: rows.evaluations.filter(countsForBest).length,
    quick: rows.evaluations.filter((e) => e.scenarios !== 'all').length,
    byStatus,
    adHoc: rows.evaluations.filter((e) => !e.runId).length,
    harnessSeconds: sumOf(rows.evaluations.map((e) => e.harnessSeconds ?? 0)),
    gpuSeconds: sumOf(rows.evaluations.filter((e) => e.arch?.startsWith('sm_')).map((e) => e.harnessSeconds ?? 0)),
  };
}

/**
 * The questions that preceded the largest gains realized in the window: those whose recorded best
 * after (gain attribution, src/questions/) was first reached by an evaluation that finished in the
 * window. A gain counts in the digest of the day it happened, even when it was asked the day before.
 */
export function selectTopQuestions(rows: Pick<DigestRows, 'gainQuestions' | 'runEvaluations'>, window: DigestWindow, limit: number): DigestQuestion[] {
  const byRun = historiesOf(rows);
  const picked: DigestQuestion[] = [];
  for (const q of rows.gainQuestions) {
    if (!finite(q.bestBefore) || !finite(q.bestAfter) || !(q.bestBefore > 0) || !(q.bestAfter > q.bestBefore)) continue;
    // The counted result that reached the question's best after (attribution counts nothing else).
    const reached = (byRun.get(q.runId) ?? []).find((e) => e.seq! > q.evalSeqAtAsk && isCounted(e) && e.speedupVsBaseline! >= q.bestAfter!);
    if (!reached || reached.finishedAt < window.from || reached.finishedAt >= window.to) continue;
    picked.push({
      questionId: q.id,
      runId: q.runId,
      task: q.task,
      source: q.source,
      author: q.author,
      bankId: q.bankId,
      text: q.text,
      bestBefore: q.bestBefore,
      bestAfter: q.bestAfter,
      gain: finite(q.gain) ? q.gain : q.bestAfter / q.bestBefore,
      final: finite(q.gain),
      askedAt: q.createdAt.toISOString(),
      realizedAt: reached.finishedAt.toISOString(),
    });
  }
  picked.sort((a, b) => b.gain - a.gain || a.askedAt.localeCompare(b.askedAt) || a.questionId - b.questionId);
  return picked.slice(0, limit);
}

/** The digest's figures from the rows of one window. Pure: the same rows give the same figures. */
export function summarizeDigest(rows: DigestRows, window: DigestWindow, options: SummarizeOptions = {}): DigestFigures {
  const human = rows.questionsAsked.filter((q) => q.source === 'human');
  const histories = historiesOf(rows);
  return {
    window: { from: window.from.toISOString(), to: window.to.toISOString() },
    runs: summarizeRuns(rows, window, histories),
    tasks: summarizeTasks(rows, windowSteps(histories, window)),
    evaluations: summarizeEvaluations(rows),
    model: {
      costUsd: sumOf(rows.stepUsage.map((u) => u.costUsd)),
      steps: sumOf(rows.stepUsage.map((u) => u.steps)),
      inputTokens: sumOf(rows.stepUsage.map((u) => u.inputTokens)),
      outputTokens: sumOf(rows.stepUsage.map((u) => u.outputTokens)),
    },
    questions: {
      human: human.length,
      bank: rows.questionsAsked.length - human.length,
      people: new Set(human.map((q) => q.author)).size,
      top: selectTopQuestions(rows, window, options.topQuestions ?? 5),
    },
  };
}
