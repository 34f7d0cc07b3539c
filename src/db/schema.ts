import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  type AnyPgColumn,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();
const tokens = (name: string) => bigint(name, { mode: 'number' }).notNull().default(0);

/**
 * One optimization run of one task. `status` follows the state machine in run-status.ts;
 * transitions are conditional updates so two processes never both move a run.
 */
export const runs = pgTable(
  'runs',
  {
    id: text('id').primaryKey(),
    task: text('task').notNull(),
    owner: text('owner').notNull(),
    origin: text('origin', { enum: ['slack', 'terminal', 'api'] }).notNull(),
    slackChannel: text('slack_channel'),
    slackThreadTs: text('slack_thread_ts'),
    statusMessageTs: text('status_message_ts'),
    status: text('status', {
      enum: ['queued', 'running', 'waiting', 'paused', 'finished', 'stopped', 'failed'],
    }).notNull(),
    endReason: text('end_reason'),
    arch: text('arch'),
    model: text('model').notNull(),
    autonomous: boolean('autonomous').notNull().default(false),
    /** Goal: geomean speedup over the task's goal reference (best peer or baseline). */
    target: doublePrecision('target').notNull(),
    questionTimeoutSeconds: integer('question_timeout_seconds').notNull(),
    budgetEvals: integer('budget_evals').notNull(),
    budgetSteps: integer('budget_steps').notNull(),
    budgetUsd: doublePrecision('budget_usd').notNull(),
    budgetSeconds: integer('budget_seconds').notNull(),
    evalsUsed: integer('evals_used').notNull().default(0),
    stepsUsed: integer('steps_used').notNull().default(0),
    bestEvaluationId: bigint('best_evaluation_id', { mode: 'number' }),
    bestSpeedup: doublePrecision('best_speedup'),
    bestSpeedupVsPeer: doublePrecision('best_speedup_vs_peer'),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    inputTokens: tokens('input_tokens'),
    outputTokens: tokens('output_tokens'),
    cacheReadTokens: tokens('cache_read_tokens'),
    cacheWriteTokens: tokens('cache_write_tokens'),
    /**
     * The run this one continues or forks (`/kernelseek continue`, `run --from`): it starts from that
     * run's best kernel with its history summarised. Its children are the runs naming it here.
     */
    parentRunId: text('parent_run_id').references((): AnyPgColumn => runs.id, { onDelete: 'set null' }),
    /** Engine state that survives a worker's death (pending decision point, turn counter, …). */
    state: jsonb('state').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    error: text('error'),
    /**
     * The process that hosts the run (`kernelseek run`), renewed by its heartbeat. A live run whose
     * lease has expired lost its process: it shows as interrupted and `run --resume` may take it over.
     */
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true }),
    createdAt: createdAt(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('runs_slack_thread_uq').on(t.slackChannel, t.slackThreadTs),
    index('runs_status_idx').on(t.status),
    index('runs_created_idx').on(t.createdAt),
    index('runs_parent_idx').on(t.parentRunId),
  ],
);

/**
 * The conversation as the model sees it, one row per message, in order. Resuming a run rebuilds the
 * request from these rows, so a step is never lost or repeated.
 */
export const runMessages = pgTable(
  'run_messages',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    runId: text('run_id').notNull().references(() => runs.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    role: text('role', { enum: ['user', 'assistant'] }).notNull(),
    content: jsonb('content').$type<unknown[]>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('run_messages_seq_uq').on(t.runId, t.seq)],
);

/** Every model call: what was asked, what came back, usage and cost. */
export const agentSteps = pgTable(
  'agent_steps',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    runId: text('run_id').notNull().references(() => runs.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    model: text('model').notNull(),
    request: jsonb('request').$type<Record<string, unknown>>().notNull(),
    response: jsonb('response').$type<Record<string, unknown>>(),
    stopReason: text('stop_reason'),
    inputTokens: tokens('input_tokens'),
    outputTokens: tokens('output_tokens'),
    cacheReadTokens: tokens('cache_read_tokens'),
    cacheWriteTokens: tokens('cache_write_tokens'),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    latencyMs: integer('latency_ms'),
    error: text('error'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('agent_steps_seq_uq').on(t.runId, t.seq)],
);

/** Every tool call the model made and what the tool returned. */
export const toolCalls = pgTable(
  'tool_calls',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    runId: text('run_id').notNull().references(() => runs.id, { onDelete: 'cascade' }),
    stepSeq: integer('step_seq').notNull(),
    toolUseId: text('tool_use_id').notNull(),
    name: text('name').notNull(),
    input: jsonb('input').$type<unknown>().notNull(),
    result: jsonb('result').$type<unknown>(),
    isError: boolean('is_error').notNull().default(false),
    durationMs: integer('duration_ms'),
    createdAt: createdAt(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('tool_calls_use_uq').on(t.runId, t.toolUseId)],
);

/** One harness evaluation of one candidate (for a run, or submitted directly with `eval --remote`). */
export const evaluations = pgTable(
  'evaluations',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    runId: text('run_id').references(() => runs.id, { onDelete: 'cascade' }),
    seq: integer('seq'),
    task: text('task').notNull(),
    jobId: text('job_id'),
    candidateHash: text('candidate_hash').notNull(),
    source: text('source').notNull(),
    scenarios: text('scenarios').notNull().default('all'),
    status: text('status', {
      enum: ['pending', 'ok', 'compile_error', 'runtime_error', 'timeout', 'incorrect', 'rejected', 'error'],
    }).notNull(),
    correct: boolean('correct'),
    speedupVsBaseline: doublePrecision('speedup_vs_baseline'),
    speedupVsBestPeer: doublePrecision('speedup_vs_best_peer'),
    result: jsonb('result').$type<Record<string, unknown>>(),
    gpu: text('gpu'),
    arch: text('arch'),
    worker: text('worker'),
    harnessSeconds: doublePrecision('harness_seconds'),
    queuedAt: createdAt(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('evaluations_run_seq_uq').on(t.runId, t.seq),
    uniqueIndex('evaluations_job_uq').on(t.jobId),
    index('evaluations_finished_idx').on(t.finishedAt),
  ],
);

/**
 * Questions asked in a run, by a person or from the bank. A person's reply that arrives between
 * decision points waits here (delivered_at null) until the next turn boundary.
 */
export const questions = pgTable(
  'questions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    runId: text('run_id').notNull().references(() => runs.id, { onDelete: 'cascade' }),
    source: text('source', { enum: ['human', 'bank'] }).notNull(),
    bankId: text('bank_id'),
    text: text('text').notNull(),
    author: text('author').notNull(),
    trigger: text('trigger'),
    /** Measured evidence the question was asked with (filled placeholders, decision-point figures). */
    evidence: jsonb('evidence').$type<Record<string, unknown>>(),
    /**
     * The decision card this answers (`<run>.d<n>`), when the person answered a card: a button, the
     * card's reply form, or a thread reply written while that card was open. Delivered only to that
     * decision point, never to another.
     */
    decisionId: text('decision_id'),
    /** Idempotency key from the channel it came through (e.g. the Slack message ts). */
    externalId: text('external_id'),
    evalSeqAtAsk: integer('eval_seq_at_ask').notNull().default(0),
    bestBefore: doublePrecision('best_before'),
    bestAfter: doublePrecision('best_after'),
    gain: doublePrecision('gain'),
    evalsAfter: integer('evals_after').notNull().default(0),
    createdAt: createdAt(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('questions_external_uq').on(t.runId, t.externalId),
    index('questions_run_idx').on(t.runId, t.id),
    index('questions_bank_idx').on(t.bankId),
  ],
);

/**
 * Decision points as cards people answer: opened by the engine when a run reaches one, closed when
 * a question answers it (or the run ends). The Slack reporter records the card's message, so a
 * thread reply can be bound to the card that was open when it was written.
 */
export const decisionCards = pgTable(
  'decision_cards',
  {
    /** `<run id>.d<n>`, n counting the run's decision points from 1. */
    id: text('id').primaryKey(),
    runId: text('run_id').notNull().references(() => runs.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    trigger: text('trigger').notNull(),
    openedAt: timestamp('opened_at', { withTimezone: true }).notNull().defaultNow(),
    closedAt: timestamp('closed_at', { withTimezone: true }),
    /** What closed it: `question:<id>` (a person's or the bank's), `run_ended`, `superseded`. */
    closedBy: text('closed_by'),
    slackChannel: text('slack_channel'),
    /** The card's message in the run's thread (Slack ts). */
    slackTs: text('slack_ts'),
  },
  (t) => [uniqueIndex('decision_cards_run_seq_uq').on(t.runId, t.seq)],
);

/** Questions in the bank beyond the shipped YAML: promoted from people's questions. */
export const bankEntries = pgTable(
  'bank_entries',
  {
    id: text('id').primaryKey(),
    text: text('text').notNull(),
    kind: text('kind', { enum: ['layer_shift', 'limit_rejection'] }).notNull(),
    triggers: jsonb('triggers').$type<string[]>().notNull(),
    placeholders: jsonb('placeholders').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    source: text('source', { enum: ['seed', 'promoted'] }).notNull(),
    originQuestionId: bigint('origin_question_id', { mode: 'number' }),
    promotedBy: text('promoted_by'),
    createdAt: createdAt(),
    retiredAt: timestamp('retired_at', { withTimezone: true }),
  },
    // A person's question is promoted at most once, even when two people press the button together.
    (t) => [uniqueIndex('bank_entries_origin_uq').on(t.originQuestionId)],
);

/** Slack event ids already handled: Slack retries deliveries and each must act once. */
export const slackEvents = pgTable('slack_events', {
  eventId: text('event_id').primaryKey(),
  kind: text('kind').notNull(),
  receivedAt: createdAt(),
});

/** Digests posted: one per channel per day, whoever schedules it. */
export const digests = pgTable(
  'digests',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    channel: text('channel').notNull(),
    day: text('day').notNull(),
    windowStart: timestamp('window_start', { withTimezone: true }).notNull(),
    windowEnd: timestamp('window_end', { withTimezone: true }).notNull(),
    messageTs: text('message_ts'),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
    sentAt: timestamp('sent_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('digests_channel_day_uq').on(t.channel, t.day)],
);
