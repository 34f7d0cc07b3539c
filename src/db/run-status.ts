/**
 * The run state machine.
 *
 *   queued ──▶ running ◀──▶ waiting        (a decision point waits for a question)
 *                 │  ▲
 *                 ▼  │
 *               paused                      (a person paused it)
 *   any live state ──▶ finished | stopped | failed   (terminal)
 */
export const RUN_STATUSES = ['queued', 'running', 'waiting', 'paused', 'finished', 'stopped', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const LIVE_STATUSES = ['queued', 'running', 'waiting', 'paused'] as const satisfies readonly RunStatus[];
export const TERMINAL_STATUSES = ['finished', 'stopped', 'failed'] as const satisfies readonly RunStatus[];

const TRANSITIONS: Record<RunStatus, readonly RunStatus[]> = {
  queued: ['running', 'paused', 'stopped', 'failed'],
  running: ['waiting', 'paused', 'finished', 'stopped', 'failed'],
  waiting: ['running', 'paused', 'finished', 'stopped', 'failed'],
  paused: ['running', 'stopped', 'failed'],
  finished: [],
  stopped: [],
  failed: [],
};

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The states a run may be in for a move to `to` to be legal. */
export function allowedSources(to: RunStatus): RunStatus[] {
  return RUN_STATUSES.filter((from) => canTransition(from, to));
}

export function isTerminal(status: RunStatus): boolean {
  return (TERMINAL_STATUSES as readonly RunStatus[]).includes(status);
}

/** The end reason of a run that stopped making progress; unlike other ends, a person may re-open it. */
export const CONVERGED = 'converged';
/** The end reason of a run that made too many model requests without evaluating anything; re-openable too. */
export const NO_EVALUATION = 'no_evaluation';

/**
 * Ends a person may continue from: a converged run or one that talked without evaluating (with a question), a terminal run stopped with
 * Ctrl-C (`interrupted`), and a run stopped by an account limit an unreachable model API or a stalled one (once fixed). Every other end is final.
 */
export const REOPENABLE: Partial<Record<RunStatus, readonly string[]>> = {
  finished: [CONVERGED, NO_EVALUATION],
  stopped: ['interrupted'],
  failed: ['model_unreachable', 'model_stalled', 'credit_balance', 'spend_limit', 'quota'],
};

export function canReopen(run: { status: RunStatus; endReason: string | null }): boolean {
  return run.endReason !== null && (REOPENABLE[run.status] ?? []).includes(run.endReason);
}
