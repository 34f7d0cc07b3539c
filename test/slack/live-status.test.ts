import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import type { RunView } from '../../src/slack/agent-port.js';
import { createSlackPoster, createSlackReporter, createSlackWebClient, type StatusClock } from '../../src/slack/index.js';
import { SLACK_STATUS_LIFETIME_MS } from '../../src/slack/reporter/live-status.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startFakeSlack, type FakeSlack, type RecordedCall } from '../support/slack/fake-slack.js';
import { createStoredRun, viewOf } from '../support/slack/runs.js';

// The thread's status line through a long evaluation, on a clock the test drives: ten minutes of
// timing one scenario pass in milliseconds, so the 2-minute rule is checked without sleeping. The
// poster and the fake Slack are real (HTTP through the SDK); only the status refresh's timers are
// the test's.

/** Timers that fire when the test moves the clock on. */
function manualClock(): StatusClock & { advance(ms: number): void; at: number } {
  let now = 0;
  let next = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    get at() {
      return now;
    },
    now: () => now,
    setTimeout(fn, ms) {
      next += 1;
      timers.set(next, { at: now + ms, fn });
      return next;
    },
    clearTimeout: (h) => void timers.delete(h as number),
    advance(ms) {
      const end = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].fn();
      }
      now = end;
    },
  };
}

let db: TestDatabase;
let fake: FakeSlack;

beforeAll(async () => {
  db = await createTestDatabase('postgres');
  fake = await startFakeSlack();
});
afterAll(async () => {
  await fake.close();
  await db.dispose();
});

const STATUS_LANE_MS = 40;

describe("a thread's status line", () => {
  it('shows what the run does, is refreshed within Slack’s 2 minutes through a long evaluation, stays within its rate, and is cleared', async () => {
    const clock = manualClock();
    const poster = createSlackPoster({
      client: createSlackWebClient({ token: 'xoxb-test', apiUrl: fake.apiUrl }),
      logger: silentLogger,
      pacing: { messageIntervalMs: 20, updateIntervalMs: 20, statusIntervalMs: STATUS_LANE_MS },
    });
    const reporter = createSlackReporter({ poster, store: db.store, logger: silentLogger, statusClock: clock });
    const root = await poster.postMessage({ channel: 'CLIVE', text: 'card' });
    const threadTs = (root as { ts: string }).ts;
    const stored = await createStoredRun(db.store, { slackChannel: 'CLIVE', slackThreadTs: threadTs });
    const run: RunView = viewOf(stored, { status: 'running' });

    // Each setStatus call with the simulated time at which the reporter made it.
    const seen: { at: number; status: string; call: RecordedCall }[] = [];
    const settle = async () => {
      await poster.idle();
      for (const call of fake.callsOf('assistant.threads.setStatus').slice(seen.length)) seen.push({ at: clock.at, status: String(call.args.status), call });
    };
    const step = async (ms: number, event?: () => unknown) => {
      clock.advance(ms);
      await event?.();
      await settle();
    };

    await step(0, () => reporter.statusChanged({ run, from: 'queued', to: 'running' }));
    await step(2_000, () => reporter.stepStarted!({ run, step: 1 }));
    await step(30_000, () => reporter.toolStarted({ run, name: 'evaluate', summary: 'evaluate kernel.cpp' }));
    await step(5_000, () => reporter.evaluationProgress({ run, seq: 1, progress: { phase: 'compile', status: 'ok', message: 'compiled' } }));
    // A burst: eleven scenarios checked within a second become one or two calls, the latest state last.
    await step(1_000, async () => {
      for (let i = 0; i < 11; i++) await reporter.evaluationProgress({ run, seq: 1, progress: { phase: 'correctness', i, n: 11 } });
    });
    await step(1_000, () => reporter.evaluationProgress({ run, seq: 1, progress: { phase: 'timing', i: 0, n: 11 } }));
    // Ten minutes timing one scenario, with no event at all: only the refresh keeps the line alive.
    const longFrom = clock.at;
    for (let t = 0; t < 600_000; t += 5_000) await step(5_000);
    const longTo = clock.at;
    await step(1_000, () => reporter.evaluationProgress({ run, seq: 1, progress: { phase: 'timing', i: 10, n: 11 } }));
    await step(1_000, () => reporter.newBest({ run, evaluation: { id: 1, seq: 1, status: 'ok', correct: true, scenarios: { total: 11, correct: 11 }, speedupVsBaseline: 1.2, speedupVsBestPeer: 1, bestPeer: 'torch', commit: null, headline: '' }, previousSpeedup: null }));
    await step(1_000);
    await step(20_000, () => reporter.decisionPoint({ run: { ...run, status: 'waiting' }, decision: { id: `${run.id}.d1`, trigger: 'stopped', reason: 'The agent ended its turn.', evidence: {}, deadline: new Date(Date.now() + 600_000) } }));
    const clearedAt = seen.length;
    // Waiting for people: nothing more is sent, however long it waits.
    for (let t = 0; t < 300_000; t += 30_000) await step(30_000);
    await poster.close(1000);

    const statuses = seen.map((s) => s.status);
    expect(statuses[0]).toBe('is thinking…');
    expect(statuses).toEqual(expect.arrayContaining(['is compiling the candidate…', 'is checking correctness…', 'is timing 1/11…', 'is timing 11/11…']));
    // The burst: its last state was sent, and at most two calls for eleven events.
    const burst = statuses.filter((s) => s.startsWith('is checking correctness '));
    expect(burst.at(-1)).toBe('is checking correctness 11/11…');
    expect(burst.length).toBeLessThanOrEqual(2);
    // Loading messages: at most Slack's 10, sent with the thinking line.
    for (const s of seen) expect(((s.call.args.loading_messages as string[] | undefined) ?? []).length).toBeLessThanOrEqual(10);
    expect(seen[0]!.call.args.loading_messages).toEqual(expect.arrayContaining(['is thinking…']));

    // The 2-minute rule: while the line is shown, no gap between two calls reaches Slack's lifetime.
    const shown = seen.slice(0, clearedAt);
    for (let i = 1; i < shown.length; i++) expect(shown[i]!.at - shown[i - 1]!.at, `gap before call ${i}`).toBeLessThan(SLACK_STATUS_LIFETIME_MS);
    const during = shown.filter((s) => s.at > longFrom && s.at <= longTo);
    expect(during.length).toBeGreaterThanOrEqual(Math.floor((longTo - longFrom) / SLACK_STATUS_LIFETIME_MS));
    expect(during.every((s) => s.status === 'is timing 1/11…')).toBe(true);
    // …and no more than that: a refresh every 90 s, not a call per tick.
    expect(during.length).toBeLessThanOrEqual(Math.ceil((longTo - longFrom) / 90_000) + 1);

    // A thread message clears Slack's line: it is sent again right after the new best.
    const afterBest = seen.findIndex((s, i) => i > 0 && s.status === seen[i - 1]!.status && s.at === seen[i - 1]!.at + 1_000);
    expect(afterBest).toBeGreaterThan(0);

    // Cleared when the run waits for people, and then left alone.
    expect(statuses[clearedAt - 1]).toBe('');
    expect(seen).toHaveLength(clearedAt);
    // The rate: the poster's lane spaces the calls in real time.
    const times = seen.map((s) => s.call.at);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(STATUS_LANE_MS - 15);
    expect(seen.every((s) => s.call.outcome === 'ok')).toBe(true);
  }, 60_000);
});
