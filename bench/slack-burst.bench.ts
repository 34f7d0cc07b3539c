/**
 * Slack calls per evaluation during a burst of evaluations.
 *
 * The Slack reporter and the one poster, with Slack's real pacing (1 message/s per channel, Tier 3
 * chat.update), against the fake Slack Web API, receive the events the agent engine emits for each
 * evaluation (a model step, the tool call, the evaluation, every fifth a new best), for a burst of
 * evaluations finishing faster than Slack lets a card be edited. Counted: every HTTP call the fake
 * Slack recorded, per evaluation, until the thread and the card are up to date — without and with a
 * 429 storm on chat.update. "Naive" is one Slack call per event (a card edit for each step, tool
 * call and evaluation, plus the messages), what a reporter without coalescing would send.
 *
 *   npx tsx bench/slack-burst.bench.ts [evaluations=60] [interval-ms=100]
 */
import { setTimeout as delay } from 'node:timers/promises';
import { createStore, openDatabase } from '../src/db/index.js';
import { silentLogger } from '../src/core/logger.js';
import { createSlackPoster, createSlackReporter, createSlackWebClient, SLACK_PACING } from '../src/slack/index.js';
import { describeRun } from '../src/slack/agent-port.js';
import { startFakeSlack, type FakeSlack } from '../test/support/slack/fake-slack.js';
import { createStoredRun, storeEvaluation } from '../test/support/slack/runs.js';

const evaluations = Number(process.argv[2] ?? 60);
const intervalMs = Number(process.argv[3] ?? 100);

const handle = await openDatabase({ kind: 'memory' });
await handle.migrate();
const store = createStore(handle.db);

async function burst(label: string, channel: string, storm: (fake: FakeSlack) => void): Promise<void> {
  const fake = await startFakeSlack();
  const poster = createSlackPoster({ client: createSlackWebClient({ token: 'xoxb-bench', apiUrl: fake.apiUrl }), logger: silentLogger, pacing: SLACK_PACING });
  const reporter = createSlackReporter({ poster, store, logger: silentLogger });
  const root = (await poster.postMessage({ channel, text: 'run' })) as { ts: string };
  let run = await createStoredRun(store, { slackChannel: channel, slackThreadTs: root.ts, budgetEvals: evaluations });
  run = (await store.runs.transition(run.id, 'running'))!;
  const before = fake.calls.length;
  storm(fake);

  let events = 0;
  let messages = 0;
  const t0 = performance.now();
  let best = 1;
  for (let seq = 1; seq <= evaluations; seq++) {
    const isBest = seq % 5 === 0;
    const speedup = isBest ? (best += 0.05) : best - 0.1;
    const evaluation = await storeEvaluation(store, run.id, seq, seq % 7 === 0 ? null : speedup);
    await store.runs.update(run.id, { evalsUsed: seq, stepsUsed: seq });
    run = (await store.runs.get(run.id))!;
    const view = describeRun(run);
    await reporter.stepFinished({ run: view, step: seq, stopReason: 'tool_use', costUsd: 0.01, toolCalls: ['evaluate'] });
    await reporter.toolStarted({ run: view, name: 'evaluate', summary: 'evaluate' });
    await reporter.evaluationFinished({ run: view, evaluation });
    events += 3;
    if (isBest && evaluation.correct) {
      await reporter.newBest({ run: view, evaluation, previousSpeedup: best - 0.05 });
      events += 1;
      messages += 1;
    }
    await delay(intervalMs);
  }
  const burstSeconds = (performance.now() - t0) / 1000;
  await poster.idle();
  const drained = (performance.now() - t0) / 1000;
  const calls = fake.calls.slice(before);
  const by = (m: string) => calls.filter((c) => c.method === m).length;
  const card = fake.message(channel, root.ts)!;
  const finalOk = JSON.stringify(card.blocks).includes(`eval ${evaluations}/${evaluations}`);
  console.log(
    `${label}: ${evaluations} evaluations in ${burstSeconds.toFixed(1)} s (${events} reporter events) → ${calls.length} Slack calls ` +
      `(chat.update ${by('chat.update')}, chat.postMessage ${by('chat.postMessage')}, 429s ${calls.filter((c) => c.outcome === 'rate_limited').length}) = ` +
      `${(calls.length / evaluations).toFixed(2)} calls per evaluation; naive: ${((events + messages) / evaluations).toFixed(2)}; ` +
      `thread and card up to date ${drained.toFixed(1)} s after the burst began; final card correct: ${finalOk}`,
  );
  await poster.close(0);
  await fake.close();
}

try {
  await burst('no rate limiting', 'CBURST001', () => {});
  await burst('429 storm (chat.update answers 429, Retry-After 2 s, 5 times)', 'CBURST002', (fake) => fake.rateLimit('chat.update', { times: 5, retryAfter: 2 }));
} finally {
  await handle.close();
}
