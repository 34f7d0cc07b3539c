import { describeError, UserInputError } from '../core/errors.js';
import { canReopen, isTerminal, type Question, type Run } from '../db/index.js';
import { findTask } from '../harness/tasks.js';
import { loadParentRun, summariseParent } from './lineage.js';
import { buildTaskBrief } from './prompt/system-prompt.js';
import { DEFAULT_BUDGETS, StartRunParamsSchema, type StartRunParams } from './run-params.js';
import { parseRunState, RunStateSchema } from './run-state.js';
import { describeRun, type RunView } from './run-view.js';
import { endRun } from './turn/finish.js';
import { reopenRun } from './turn/reopen.js';
import { transitionRun, type EngineServices } from './turn/services.js';
import { openWorkspaceFor } from './turn/turn-context.js';
import { assertTaskReady } from '../harness/task-gate.js';

/** The most a question may hold (a Slack message is at most 40k characters; a question is short). */
export const MAX_QUESTION_CHARS = 4000;

export async function getLiveRun(services: EngineServices, runId: string): Promise<Run> {
  const run = await services.store.runs.get(runId);
  if (!run) throw new UserInputError(`There is no run '${runId}'.`, { code: 'run_unknown' });
  if (isTerminal(run.status)) {
    throw new UserInputError(`Run ${runId} has already ${run.status === 'finished' ? 'finished' : run.status === 'stopped' ? 'been stopped' : 'failed'} (${run.endReason ?? 'no reason recorded'}).`, {
      code: 'run_not_live',
    });
  }
  return run;
}

export async function startRun(services: EngineServices, input: StartRunParams): Promise<RunView> {
  const parsed = StartRunParamsSchema.safeParse(input);
  if (!parsed.success) {
    throw new UserInputError(`Invalid run parameters: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'params'}: ${i.message}`).join('; ')}`, { code: 'run_params_invalid' });
  }
  const params = parsed.data;
  const task = await findTask(services.config.core.tasksDir, params.task);
  // Every error of the task at once, with its fix, before a run is created (harness/task-gate.ts).
  await assertTaskReady(task, { config: services.config, env: services.config.agent.bash.env });
  let arch: string | null = null;
  if (task.task.device === 'cuda') {
    arch = params.arch ?? task.task.architectures[0] ?? null;
    if (arch && !task.task.architectures.includes(arch)) {
      throw new UserInputError(`Task ${task.task.name} supports ${task.task.architectures.join(', ')}, not ${arch}.`, { code: 'arch_unsupported' });
    }
  }
  if (params.slack) {
    const existing = await services.store.runs.findByThread(params.slack.channel, params.slack.threadTs);
    if (existing) throw new UserInputError(`This thread already belongs to run ${existing.id}.`, { code: 'thread_taken' });
  }
  const parent = params.continueFrom ? await loadParentRun(services.store, params.continueFrom, task.task.name) : undefined;
  const budgets = { ...DEFAULT_BUDGETS, ...params.budgets };
  const target = params.target ?? parent?.run.target ?? task.task.goal.speedup;
  const run = await services.store.runs.create({
    ...(parent ? { parentRunId: parent.run.id } : {}),
    ...(params.id ? { id: params.id } : {}),
    task: task.task.name,
    owner: params.owner,
    origin: params.origin,
    slackChannel: params.slack?.channel ?? null,
    slackThreadTs: params.slack?.threadTs ?? null,
    arch,
    model: params.model ?? services.config.anthropic.model,
    autonomous: params.autonomous,
    target,
    questionTimeoutSeconds: Math.round(params.questionTimeoutSeconds),
    budgetEvals: budgets.evals,
    budgetSteps: budgets.steps,
    budgetUsd: budgets.usd,
    budgetSeconds: budgets.seconds,
    state: RunStateSchema.parse({ scenarios: params.scenarios }) as unknown as Record<string, unknown>,
  });
  try {
    await openWorkspaceFor(services, run, task);
    const history = parent ? `\n\n${await summariseParent(services.store, parent)}` : '';
    const brief = buildTaskBrief({ task, scenarios: params.scenarios, target, arch, budgetEvals: budgets.evals }) + history;
    await services.store.transcript.appendMessage(run.id, 0, 'user', [{ type: 'text', text: brief }]);
    await services.scheduler.schedule({ runId: run.id, turn: 0 }, { delayMs: 0 });
  } catch (error) {
    // A run that could not start must not linger as queued.
    await endRun(services, run, 'failed', 'start_failed', `The run could not start: ${describeError(error)}`).catch(() => undefined);
    throw error;
  }
  return describeRun(run, services.now());
}

export async function stopRun(services: EngineServices, runId: string, options: { by?: string; reason?: 'stopped_by_user' | 'interrupted' } = {}): Promise<RunView> {
  const run = await getLiveRun(services, runId);
  const ended = await endRun(services, run, 'stopped', options.reason ?? 'stopped_by_user', options.by ? `stopped by ${options.by}` : null);
  services.inFlight.get(runId)?.abort();
  return describeRun(ended, services.now());
}

export async function pauseRun(services: EngineServices, runId: string): Promise<RunView> {
  const run = await getLiveRun(services, runId);
  if (run.status === 'paused') return describeRun(run, services.now());
  const moved = await transitionRun(services, run, 'paused');
  if (!moved) throw new UserInputError(`Run ${runId} cannot be paused while it is ${run.status}.`, { code: 'run_state' });
  return describeRun(moved, services.now());
}

export async function resumeRun(services: EngineServices, runId: string): Promise<RunView> {
  const existing = await services.store.runs.get(runId);
  if (existing && canReopen(existing)) {
    const reopened = await reopenRun(services, existing);
    return describeRun(reopened ?? (await services.store.runs.get(runId)) ?? existing, services.now());
  }
  const run = await getLiveRun(services, runId);
  if (run.status !== 'paused') throw new UserInputError(`Run ${runId} is ${run.status}, not paused.`, { code: 'run_state' });
  const moved = await transitionRun(services, run, 'running');
  if (!moved) throw new UserInputError(`Run ${runId} could not be resumed.`, { code: 'run_state' });
  // The current turn may already exist as a delayed job (paused while waiting): run it now.
  const job = { runId, turn: parseRunState(moved.state).turn };
  await services.scheduler.schedule(job, { delayMs: 0 });
  await services.scheduler.wake(job);
  return describeRun(moved, services.now());
}

export async function addBudget(services: EngineServices, runId: string, delta: { evals?: number; steps?: number; usd?: number; seconds?: number }): Promise<RunView> {
  const values = Object.entries(delta).filter(([, v]) => v !== undefined);
  if (values.length === 0) throw new UserInputError('Say which budget to add to, e.g. `budget +20` (evaluations).', { code: 'budget_invalid' });
  for (const [name, v] of values) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new UserInputError(`A budget can only grow: ${name} must be a positive number.`, { code: 'budget_invalid' });
    if ((name === 'evals' || name === 'steps' || name === 'seconds') && !Number.isInteger(v)) {
      throw new UserInputError(`${name} must be a whole number.`, { code: 'budget_invalid' });
    }
  }
  await getLiveRun(services, runId);
  const run = await services.store.agentRuns.addBudget(runId, delta);
  return describeRun(run!, services.now());
}

export interface SubmittedQuestion {
  question: Question;
  /** False when the idempotency key was seen before (a redelivered event): nothing new was queued. */
  created: boolean;
  /** `answers_decision`: the run was waiting and takes it now; `next_turn`: at the next turn boundary. */
  delivery: 'answers_decision' | 'next_turn';
}

/**
 * A person answered a decision card that is no longer the run's open decision point (answered by
 * someone else or the bank, superseded by a later one, or the run ended). The answer is not stored
 * and never reaches the agent; `openDecisionId` names the card that is open now, if any.
 */
export class DecisionClosedError extends UserInputError {
  readonly decisionId: string;
  readonly openDecisionId: string | null;
  constructor(decisionId: string, openDecisionId: string | null) {
    super(
      openDecisionId
        ? `Decision ${decisionId} is closed; the open one is ${openDecisionId}. Your answer was not passed on.`
        : `Decision ${decisionId} is closed and no decision is open now. Your answer was not passed on.`,
      { code: 'decision_closed' },
    );
    this.decisionId = decisionId;
    this.openDecisionId = openDecisionId;
  }
}

export async function submitQuestion(
  services: EngineServices,
  runId: string,
  input: { text: string; author: string; idempotencyKey: string; decisionId?: string | undefined },
): Promise<SubmittedQuestion> {
  const text = input.text.trim();
  if (text === '') throw new UserInputError('The question is empty.', { code: 'question_empty' });
  if (text.length > MAX_QUESTION_CHARS) {
    throw new UserInputError(`The question is ${text.length} characters long; keep it under ${MAX_QUESTION_CHARS}.`, { code: 'question_too_long' });
  }
  if (!input.idempotencyKey) throw new UserInputError('A question needs an idempotency key (e.g. the Slack message ts).', { code: 'question_key' });
  const existing = await services.store.runs.get(runId);
  if (input.decisionId) return submitAnswer(services, existing, runId, { ...input, text, decisionId: input.decisionId });
  // A question to a converged run re-opens it; the question answers the decision point it re-opens at.
  const reopenable = existing !== undefined && canReopen(existing);
  const run = reopenable ? existing : await getLiveRun(services, runId);
  const { question, created } = await services.store.questions.add({
    runId,
    source: 'human',
    text,
    author: input.author,
    externalId: input.idempotencyKey,
  });
  if (reopenable && created) await reopenRun(services, run);
  // Read after the insert: if the turn number moves on meanwhile, the waiting turn sees the question itself.
  const after = (await services.store.runs.get(runId)) ?? run;
  const state = parseRunState(after.state);
  if (created && state.decision && after.status !== 'paused') await services.scheduler.wake({ runId, turn: state.turn });
  return { question, created, delivery: state.decision ? 'answers_decision' : 'next_turn' };
}

/**
 * An answer to one decision card: stored only while that card is open (checked under the run's row
 * lock, so it is delivered with that decision point or refused, never handed to a later one).
 */
async function submitAnswer(
  services: EngineServices,
  existing: Run | undefined,
  runId: string,
  input: { text: string; author: string; idempotencyKey: string; decisionId: string },
): Promise<SubmittedQuestion> {
  if (!existing) throw new UserInputError(`There is no run '${runId}'.`, { code: 'run_unknown' });
  const added = await services.store.agentRuns.addBoundQuestion(runId, input.decisionId, {
    source: 'human',
    text: input.text,
    author: input.author,
    externalId: input.idempotencyKey,
  });
  if (added.kind === 'closed') throw new DecisionClosedError(input.decisionId, isTerminal(existing.status) ? null : added.openDecisionId);
  const after = (await services.store.runs.get(runId)) ?? existing;
  const state = parseRunState(after.state);
  if (added.created && state.decision && after.status !== 'paused') await services.scheduler.wake({ runId, turn: state.turn });
  return { question: added.question, created: added.created, delivery: 'answers_decision' };
}

export async function askFromBankNow(services: EngineServices, runId: string): Promise<RunView> {
  const run = await getLiveRun(services, runId);
  const state = parseRunState(run.state);
  if (!state.decision) {
    throw new UserInputError(`Run ${runId} is not at a decision point; the bank is asked when it reaches one (or reply with your own question).`, { code: 'no_decision_pending' });
  }
  const patched = await services.store.agentRuns.patchState(runId, { bankRequestedAt: services.now().toISOString() });
  if (patched && patched.status !== 'paused') await services.scheduler.wake({ runId, turn: parseRunState(patched.state).turn });
  return describeRun(patched ?? run, services.now());
}

/** Schedules a live run's current turn again (a waiting one at its deadline); idempotent. */
async function scheduleCurrentTurn(services: EngineServices, run: Run): Promise<void> {
  const state = parseRunState(run.state);
  const deadline = state.decision?.deadline ? Date.parse(state.decision.deadline) : null;
  const pending = run.status === 'waiting' ? await services.store.agentRuns.pendingQuestions(run.id, state.decision?.id) : [];
  const delayMs = run.status === 'waiting' && deadline && pending.length === 0 ? Math.max(0, deadline - services.now().getTime()) : 0;
  await services.scheduler.schedule({ runId: run.id, turn: state.turn }, { delayMs });
}

/**
 * Re-schedules every live run's current turn (after a restart); idempotent. A run another live
 * process hosts (its lease is current: a `kernelseek run` on the same database) is left to it; an
 * expired lease is cleared, since this process now advances the run.
 */
export async function resumeLiveRuns(services: EngineServices): Promise<string[]> {
  const runs = await services.store.runs.list({ statuses: ['queued', 'running', 'waiting'], limit: 1000 });
  const now = services.now();
  const resumed: string[] = [];
  for (const run of runs) {
    if (run.leaseOwner && run.leaseExpiresAt && run.leaseExpiresAt > now) continue;
    // Still being started: startRun appends the brief and then schedules turn 0 itself. A turn
    // scheduled before the brief would write the conversation's first message in its place (CI saw
    // startRun fail on the unique (run, seq) index when the reconciler came between the two).
    if (run.status === 'queued' && (await services.store.transcript.nextMessageSeq(run.id)) === 0) continue;
    if (run.leaseOwner) await services.store.agentRuns.releaseLease(run.id);
    await scheduleCurrentTurn(services, run);
    resumed.push(run.id);
  }
  return resumed;
}

/**
 * Settings a continued run may be given anew (`kernelseek run --resume <run> --autonomous
 * --budget-evals 80 …`); whatever is not given stays as the run had it. Budgets are the new totals.
 */
export interface RunSettings {
  autonomous?: boolean;
  budgets?: { evals?: number; steps?: number; usd?: number; seconds?: number };
  model?: string;
  target?: number;
  questionTimeoutSeconds?: number;
  scenarios?: 'quick' | 'all';
}

async function applySettings(services: EngineServices, run: Run, settings: RunSettings): Promise<void> {
  const state = parseRunState(run.state);
  // A run's best was chosen on its scenario set: changing the set would mix figures of two sets.
  if (settings.scenarios !== undefined && settings.scenarios !== state.scenarios) {
    throw new UserInputError(
      `${run.id} runs on ${state.scenarios === 'quick' ? 'the quick subset' : 'every scenario'}; a run keeps its scenario set (its best was chosen on it). Start a new run from its best instead: kernelseek run --from ${run.id} --scenarios ${settings.scenarios}.`,
      { code: 'run_option' },
    );
  }
  const b = settings.budgets ?? {};
  const below: string[] = [];
  if (b.evals !== undefined && b.evals <= run.evalsUsed) below.push(`--budget-evals ${b.evals} (it has used ${run.evalsUsed})`);
  if (b.steps !== undefined && b.steps <= run.stepsUsed) below.push(`--budget-steps ${b.steps} (it has used ${run.stepsUsed})`);
  if (b.usd !== undefined && b.usd <= run.costUsd) below.push(`--budget-usd ${b.usd} (it has spent $${run.costUsd.toFixed(2)})`);
  if (below.length > 0) throw new UserInputError(`A budget below what ${run.id} has used would end it at once: ${below.join(', ')}. Give more.`, { code: 'run_option' });
  const patch: Partial<Run> = {
    ...(settings.autonomous !== undefined ? { autonomous: settings.autonomous } : {}),
    ...(b.evals !== undefined ? { budgetEvals: b.evals } : {}),
    ...(b.steps !== undefined ? { budgetSteps: b.steps } : {}),
    ...(b.usd !== undefined ? { budgetUsd: b.usd } : {}),
    ...(b.seconds !== undefined ? { budgetSeconds: b.seconds } : {}),
    ...(settings.model !== undefined ? { model: settings.model } : {}),
    ...(settings.target !== undefined ? { target: settings.target } : {}),
    ...(settings.questionTimeoutSeconds !== undefined ? { questionTimeoutSeconds: settings.questionTimeoutSeconds } : {}),
  };
  if (Object.keys(patch).length > 0) await services.store.runs.update(run.id, patch);
}

/**
 * Continues a run from the terminal (`kernelseek run --resume`): a live run whose process died has
 * its current turn scheduled again (nothing lost or repeated: the store has every step), a paused
 * one is resumed, a converged, Ctrl-C'd or limit-stopped one is re-opened. The caller holds the lease.
 */
export async function continueRun(services: EngineServices, runId: string, settings: RunSettings = {}): Promise<RunView> {
  const run = await services.store.runs.get(runId);
  if (!run) throw new UserInputError(`There is no run '${runId}'.`, { code: 'run_unknown' });
  if (!canReopen(run)) await getLiveRun(services, runId);
  await applySettings(services, run, settings);
  if (canReopen(run)) return resumeRun(services, runId);
  const live = await getLiveRun(services, runId);
  if (live.status === 'paused') return resumeRun(services, runId);
  await scheduleCurrentTurn(services, live);
  return describeRun(live, services.now());
}
