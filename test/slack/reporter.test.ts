import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { chartPixelSize } from '../../src/digest/index.js';
import type { Run } from '../../src/db/index.js';
import { createSlackWebClient } from '../../src/slack/client.js';
import { createSlackPoster, type SlackPoster } from '../../src/slack/poster/poster.js';
import { createSlackReporter } from '../../src/slack/reporter/slack-reporter.js';
import { ACTION_IDS } from '../../src/slack/views/action-ids.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startFakeSlack, type FakeSlack } from '../support/slack/fake-slack.js';
import { createStoredRun, storeEvaluation, viewOf } from '../support/slack/runs.js';

let db: TestDatabase;
let fake: FakeSlack;
let poster: SlackPoster;
let run: Run;
let threadTs: string;

beforeAll(async () => {
  db = await createTestDatabase('pglite');
});
afterAll(async () => {
  await db.dispose();
});

beforeEach(async () => {
  await db.reset();
  fake = await startFakeSlack();
  poster = createSlackPoster({
    client: createSlackWebClient({ token: 'xoxb-test', apiUrl: fake.apiUrl }),
    logger: silentLogger,
    pacing: { messageIntervalMs: 20, updateIntervalMs: 20, ephemeralIntervalMs: 20, reactionIntervalMs: 20 },
    backoffMs: 20,
  });
  const root = (await poster.postMessage({ channel: 'CRUNS', text: 'starting' })) as { ts: string };
  threadTs = root.ts;
  run = await createStoredRun(db.store, { slackChannel: 'CRUNS', slackThreadTs: threadTs });
});

afterEach(async () => {
  await poster.close(0);
  await fake.close();
});

const blocksText = (m: { blocks?: unknown[] | undefined } | undefined) => JSON.stringify(m?.blocks ?? []);

describe('Slack reporter', () => {
  it('edits the status card in place, without posting a message per step', async () => {
    const reporter = createSlackReporter({ poster, store: db.store, logger: silentLogger });
    await reporter.statusChanged({ run: viewOf(run, { status: 'running' }), from: 'queued', to: 'running' });
    for (let step = 1; step <= 30; step++) {
      await reporter.stepFinished({ run: viewOf(run, { status: 'running', steps: { used: step, budget: 200 } }), step, stopReason: 'tool_use', costUsd: 0.01, toolCalls: ['bash'] });
    }
    await poster.idle();
    expect(fake.thread('CRUNS', threadTs)).toHaveLength(1);
    const card = fake.message('CRUNS', threadTs)!;
    expect(blocksText(card)).toContain('step 30/200');
    expect(blocksText(card)).toContain('Running');
    expect(fake.callsOf('chat.update').length).toBeLessThan(31);
  });

  it('moves the status card per stage of an evaluation, and shows why the last one failed (issue 42)', async () => {
    const reporter = createSlackReporter({ poster, store: db.store, logger: silentLogger });
    const live = viewOf(run, { status: 'running' });
    const cardNow = async () => {
      await poster.idle();
      return blocksText(fake.message('CRUNS', threadTs));
    };
    await reporter.toolStarted({ run: live, name: 'evaluate', summary: 'evaluate kernel.cpp' });
    expect(await cardNow()).toContain('now: evaluating: compiling the candidate');
    await reporter.evaluationProgress({ run: live, seq: 4, progress: { phase: 'compile', status: 'ok', message: 'compiled in 2.0 s' } });
    expect(await cardNow()).toContain('now: eval #4: compiled');
    await reporter.evaluationProgress({ run: live, seq: 4, progress: { phase: 'correctness', i: 0, n: 11 } });
    expect(await cardNow()).toContain('now: eval #4: checking correctness on 11 scenarios');
    const edits = fake.callsOf('chat.update').length;
    // Inside a stage the card does not move (the thread's status line does): one edit per stage.
    for (let i = 1; i < 11; i++) await reporter.evaluationProgress({ run: live, seq: 4, progress: { phase: 'correctness', i, n: 11 } });
    await poster.idle();
    expect(fake.callsOf('chat.update').length).toBe(edits);
    await reporter.evaluationProgress({ run: live, seq: 4, progress: { phase: 'timing', i: 0, n: 11 } });
    expect(await cardNow()).toContain('now: eval #4: timing 11 scenarios');
    await reporter.evaluationFinished({
      run: live,
      evaluation: {
        id: 9, seq: 4, status: 'compile_error', correct: false, scenarios: { total: 3, correct: 0 }, scenarioSet: 'quick', speedupVsBaseline: null, speedupVsBestPeer: null, bestPeer: null, commit: null,
        headline: 'eval #4: compile_error, 0/3 correct on the quick subset',
        failure: ["kernel.cpp:3:9: error: 'undefined_symbol' was not declared in this scope"],
      },
    });
    const card = await cardNow();
    expect(card).toContain('eval #4 (quick subset): 0/3 correct (compile_error)');
    expect(card).toContain("kernel.cpp:3:9: error: 'undefined_symbol' was not declared in this scope");
    expect(card).not.toContain('now: eval #4');
  });

  it('posts a new best, a decision card with its buttons, and who asked each question', async () => {
    const reporter = createSlackReporter({ poster, store: db.store, logger: silentLogger });
    const evaluation = await storeEvaluation(db.store, run.id, 1, 1.31);
    const fresh = (await db.store.runs.get(run.id))!;
    await reporter.newBest({ run: viewOf(fresh), evaluation, previousSpeedup: null });
    const deadline = new Date(Date.now() + 600_000);
    await reporter.decisionPoint({
      run: viewOf(fresh, { status: 'waiting', waitingFor: { trigger: 'plateau', deadline: deadline.toISOString() } }),
      decision: { id: `${run.id}.d1`, trigger: 'plateau', reason: '5 evaluations without a new best', evidence: { evals_since_gain: 5, pct_of_peak: 31.2 }, deadline },
    });
    await reporter.questionAsked({ run: viewOf(fresh), question: { id: 7, source: 'human', author: 'UALICE01', bankId: null, text: 'What bounds the slowest scenario? <!channel>', trigger: 'plateau', decisionId: `${run.id}.d1` } });
    await reporter.questionAsked({ run: viewOf(fresh), question: { id: 8, source: 'bank', author: 'bank', bankId: 'layer-shift-03', text: 'Which layer have you not looked at?', trigger: 'plateau', decisionId: null } });
    await poster.idle();

    const [, best, decision, human, bank] = fake.thread('CRUNS', threadTs);
    expect(best!.text).toMatch(/New best: 1\.31x vs baseline, 1\.05x vs torch — eval #1, 12\/12 scenarios correct/);
    // As posted: the evidence and both buttons, for this run.
    const asPosted = decision!.history[0]!;
    expect(blocksText(asPosted)).toContain(ACTION_IDS.askBank);
    expect(blocksText(asPosted)).toContain(ACTION_IDS.stopRun);
    expect(blocksText(asPosted)).toContain(`"value":"${run.id}"`);
    expect(blocksText(asPosted)).toContain('Evaluations since the last gain');
    // Once Alice's question answered it, the buttons gave way to a line saying so.
    expect(blocksText(decision)).not.toContain(ACTION_IDS.askBank);
    expect(blocksText(decision)).toContain('<@UALICE01> asked a question.');
    expect(blocksText(human)).toContain('<@UALICE01>');
    // A person's text can never ping the channel through the bot.
    expect(blocksText(human)).not.toContain('<!channel>');
    expect(blocksText(human)).toContain(`"value":"${run.id}:7"`);
    expect(blocksText(bank)).toContain('layer-shift-03');
    expect(blocksText(bank)).not.toContain(ACTION_IDS.promoteQuestion);
    // The card knows the best and the peer's name.
    expect(blocksText(fake.message('CRUNS', threadTs)!)).toContain('1.05x vs torch');
  });

  it('posts the final summary with the best kernel and a PNG chart of speedup over evaluations', async () => {
    const reporter = createSlackReporter({ poster, store: db.store, logger: silentLogger });
    await storeEvaluation(db.store, run.id, 1, 1.0);
    await storeEvaluation(db.store, run.id, 2, null);
    const best = await storeEvaluation(db.store, run.id, 3, 1.42, '// the best kernel\nvoid softmax() {}\n');
    const done = (await db.store.runs.transition(run.id, 'running'))!;
    const finished = (await db.store.runs.transition(done.id, 'finished', { endReason: 'target reached' }))!;
    await reporter.runFinished({
      run: viewOf(finished),
      summary: {
        status: 'finished',
        endReason: 'target reached',
        best: { evaluationSeq: 3, speedupVsBaseline: 1.42, speedupVsBestPeer: 1.136, file: '/nowhere/kernel.cpp', commit: best.commit },
        evaluations: 3,
        steps: 9,
        costUsd: 0.42,
        questions: { human: 1, bank: 2 },
        elapsedSeconds: 125,
        workspace: '/data/workspaces/x',
        error: null,
      },
    });
    await poster.idle();
    const summary = fake.thread('CRUNS', threadTs).at(-1)!;
    expect(summary.text).toMatch(/finished: best 1\.42x vs baseline, 3 evaluations, \$0\.42/);
    expect(blocksText(summary)).toContain('1 from people, 2 from the bank');
    expect(fake.files.map((f) => f.filename)).toEqual(['kernel.cpp', `${run.id}-speedup.png`]);
    expect(fake.files[0]!.content.toString()).toBe('// the best kernel\nvoid softmax() {}\n');
    const png = fake.files[1]!.content;
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    // The digest's shared renderer, at its default size (800 × 400 at scale 2).
    const size = chartPixelSize({});
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([size.width, size.height]);
    expect(fake.files.every((f) => f.threadTs === threadTs)).toBe(true);
    expect(blocksText(fake.message('CRUNS', threadTs)!)).toContain('Finished');
  });

  it('cuts a long error and attaches the whole text', async () => {
    const reporter = createSlackReporter({ poster, store: db.store, logger: silentLogger });
    const message = `compile failed:\n${'error: something\n'.repeat(400)}`;
    await reporter.error({ run: viewOf(run), message, fatal: false });
    await poster.idle();
    const posted = fake.thread('CRUNS', threadTs).at(-1)!;
    expect(blocksText(posted).length).toBeLessThan(4000);
    expect(fake.files[0]!.filename).toBe('error.txt');
    expect(fake.files[0]!.content.toString()).toBe(message);
  });

  it('never throws into the run when Slack fails, and ignores runs without a thread', async () => {
    const reporter = createSlackReporter({ poster, store: db.store, logger: silentLogger });
    fake.fail('chat.postMessage', { error: 'channel_not_found', times: 100 });
    fake.fail('chat.update', { error: 'channel_not_found', times: 100 });
    await expect(reporter.error({ run: viewOf(run), message: 'boom', fatal: true })).resolves.toBeUndefined();
    await expect(reporter.statusChanged({ run: viewOf(run), from: 'running', to: 'failed' })).resolves.toBeUndefined();
    await poster.idle();
    const before = fake.calls.length;
    const terminal = viewOf(run, { slack: null });
    await reporter.statusChanged({ run: terminal, from: 'queued', to: 'running' });
    await reporter.error({ run: terminal, message: 'x', fatal: false });
    await poster.idle();
    expect(fake.calls.length).toBe(before);
  });
});
