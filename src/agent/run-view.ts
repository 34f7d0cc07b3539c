import { isTerminal, type Run, type RunStatus } from '../db/index.js';

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
  target: number;
  slack: { channel: string; threadTs: string } | null;
  steps: { used: number; budget: number };
  evaluations: { used: number; budget: number };
  costUsd: { used: number; budget: number };
  elapsedSeconds: { used: number; budget: number };
  best: null | { evaluationId: number; speedupVsBaseline: number; speedupVsBestPeer: number | null };
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
    target: run.target,
    slack: run.slackChannel && run.slackThreadTs ? { channel: run.slackChannel, threadTs: run.slackThreadTs } : null,
    steps: { used: run.stepsUsed, budget: run.budgetSteps },
    evaluations: { used: run.evalsUsed, budget: run.budgetEvals },
    costUsd: { used: run.costUsd, budget: run.budgetUsd },
    elapsedSeconds: { used: Math.round(activeSeconds(run, now)), budget: run.budgetSeconds },
    best:
      run.bestEvaluationId != null && run.bestSpeedup != null
        ? { evaluationId: run.bestEvaluationId, speedupVsBaseline: run.bestSpeedup, speedupVsBestPeer: run.bestSpeedupVsPeer }
        : null,
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
