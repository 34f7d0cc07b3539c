import type { Run } from '../db/index.js';
import { isTerminal, type RunStatus } from '../db/run-status.js';

/** What a status card shows about a run: a plain snapshot, safe to serialise. */
export interface RunView {
  id: string;
  task: string;
  owner: string;
  origin: Run['origin'];
  status: RunStatus;
  endReason: string | null;
  model: string;
  arch: string | null;
  autonomous: boolean;
  /** How long a decision point waits for a person before the bank asks. */
  questionTimeoutSeconds: number;
  target: number;
  slack: { channel: string; threadTs: string } | null;
  steps: { used: number; budget: number };
  evaluations: { used: number; budget: number };
  costUsd: { used: number; budget: number };
  elapsedSeconds: { used: number; budget: number };
  /**
   * The run's counted best (src/harness/counted-best.ts): measured on the full scenario set, correct
   * everywhere. `evaluationId` is null when it is a quick run's end-of-run full-set check.
   */
  best: null | BestView;
  /**
   * A run on the quick subset: the best it chose on that subset, which steers it but never counts.
   * Shown labelled "quick" wherever it is shown; null on a full-set run.
   */
  quickBest: null | (BestView & { scenarios: 'quick' });
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** The pending decision point, when the run waits for a question (`id`: its card, absent on older runs). */
  waitingFor: null | { id?: string; trigger: string; deadline: string | null };
  /** The run this one continues or forks, if any. */
  parentRunId: string | null;
  createdAt: string;
  finishedAt: string | null;
  error: string | null;
  /** The process hosting the run (`kernelseek run`: `terminal:<host>:<pid>`), while it holds the lease. */
  host: string | null;
  /** Set while its evaluation waits for a worker: "waiting for a gpu-worker (sm_90): none attached". */
  waitingForWorker: string | null;
  /** A live run whose host stopped renewing its lease: the process died; `run --resume` continues it. */
  interrupted: boolean;
}

export interface BestView {
  evaluationId: number | null;
  /** The evaluation's number (`eval #n`). */
  seq: number | null;
  speedupVsBaseline: number;
  speedupVsBestPeer: number | null;
  /** The end-of-run full-set check of a quick run's best. */
  fullSetCheck?: boolean;
}

/**
 * The counted best a run's state keeps (`state.counted`, written after every evaluation). A state
 * saved before it existed: a full-set run's best columns are its counted best (the engine offered
 * only full-set, correct candidates), a quick run's are not.
 */
export function countedBestOfRun(run: Run): BestView | null {
  const state = run.state as { counted?: BestView & { seq: number } | null; scenarios?: string } | null;
  if (state && state.counted !== undefined) {
    const c = state.counted;
    return c ? { evaluationId: c.evaluationId, seq: c.seq, speedupVsBaseline: c.speedupVsBaseline, speedupVsBestPeer: c.speedupVsBestPeer, fullSetCheck: c.fullSetCheck === true } : null;
  }
  if ((state?.scenarios ?? 'all') !== 'all' || run.bestEvaluationId == null || run.bestSpeedup == null) return null;
  return { evaluationId: run.bestEvaluationId, seq: null, speedupVsBaseline: run.bestSpeedup, speedupVsBestPeer: run.bestSpeedupVsPeer };
}

/** A quick run's working best (its best on the subset): never counted, always labelled quick. */
function quickBestOfRun(run: Run): RunView['quickBest'] {
  const scenarios = (run.state as { scenarios?: string } | null)?.scenarios ?? 'all';
  if (scenarios !== 'quick' || run.bestEvaluationId == null || run.bestSpeedup == null) return null;
  return { evaluationId: run.bestEvaluationId, seq: null, speedupVsBaseline: run.bestSpeedup, speedupVsBestPeer: run.bestSpeedupVsPeer, scenarios: 'quick' };
}

/** True when the run is live but the process that hosted it stopped its heartbeat (it died). */
export function isInterrupted(run: Run, now: Date = new Date()): boolean {
  return !isTerminal(run.status) && run.leaseOwner !== null && run.leaseExpiresAt !== null && run.leaseExpiresAt.getTime() < now.getTime();
}

/** Active seconds: wall time since start minus time spent waiting for a question. */
export function activeSeconds(run: Run, now: Date = new Date()): number {
  if (!run.startedAt) return 0;
  const end = run.finishedAt ?? now;
  const waited = Number((run.state as { waitedMs?: number }).waitedMs ?? 0);
  const decisionAt = (run.state as { decision?: { at?: string } | null }).decision?.at;
  const waitingNow = decisionAt && !run.finishedAt ? Math.max(0, now.getTime() - Date.parse(decisionAt)) : 0;
  return Math.max(0, (end.getTime() - run.startedAt.getTime() - waited - waitingNow) / 1000);
}

export function describeRun(run: Run, now: Date = new Date()): RunView {
  const decision = (run.state as { decision?: { id?: string; trigger: string; deadline: string | null } | null }).decision ?? null;
  return {
    id: run.id,
    task: run.task,
    owner: run.owner,
    origin: run.origin,
    status: run.status,
    endReason: run.endReason,
    model: run.model,
    arch: run.arch,
    autonomous: run.autonomous,
    questionTimeoutSeconds: run.questionTimeoutSeconds,
    target: run.target,
    slack: run.slackChannel && run.slackThreadTs ? { channel: run.slackChannel, threadTs: run.slackThreadTs } : null,
    steps: { used: run.stepsUsed, budget: run.budgetSteps },
    evaluations: { used: run.evalsUsed, budget: run.budgetEvals },
    costUsd: { used: run.costUsd, budget: run.budgetUsd },
    elapsedSeconds: { used: Math.round(activeSeconds(run, now)), budget: run.budgetSeconds },
    best: countedBestOfRun(run),
    quickBest: quickBestOfRun(run),
    tokens: { input: run.inputTokens, output: run.outputTokens, cacheRead: run.cacheReadTokens, cacheWrite: run.cacheWriteTokens },
    waitingFor: decision ? { ...(decision.id ? { id: decision.id } : {}), trigger: decision.trigger, deadline: decision.deadline } : null,
    parentRunId: run.parentRunId ?? null,
    createdAt: run.createdAt.toISOString(),
    finishedAt: run.finishedAt ? run.finishedAt.toISOString() : null,
    error: run.error,
    host: run.leaseOwner,
    waitingForWorker: isTerminal(run.status) ? null : ((run.state as { waitingForWorker?: string | null }).waitingForWorker ?? null),
    interrupted: isInterrupted(run, now),
  };
}
