import { describe, expect, it } from 'vitest';
import type { RecordedCall, StoredMessage } from '../support/slack/fake-slack.js';
import { endTurn, reply, text, toolUse, userTexts } from '../support/anthropic/script.js';
import type { Run } from '../../src/db/index.js';
import { useServiceFixture } from '../support/fixture.js';
import { FAST } from '../agent/fixtures/kernels.js';
import { threadReply } from '../support/slack/signed-requests.js';
import { startSlackStack, type SlackStack } from '../support/slack/slack-stack.js';

// Issue 7's acceptance, end to end through real HTTP: a slash command starts a run of the cpu task
// (the real engine on the fake Anthropic server, the real harness); the thread gets its status card
// and its updates, a new best, a decision card; a reply in the thread reaches the model in the next
// request, once, although Slack delivered it twice; an unauthorised user is refused; a 429 storm
// loses nothing and Retry-After is respected; the final summary carries the best kernel and a chart.
const fx = useServiceFixture<SlackStack>('postgres', 'ks-slack-e2e-');

const CHANNEL = 'CKERNELS1';
const ALICE = 'UALICE001';
const BOB = 'UBOB00001';
const MALLORY = 'UMALLORY1';
const QUESTION = 'What bounds the slowest scenario: arithmetic, or moving the data?';

const json = (m: StoredMessage | undefined) => JSON.stringify(m?.blocks ?? []) + (m?.text ?? '');

/** For each 429 a method got in a lane, the next call in that lane came at least Retry-After later. */
function expectRetryAfterRespected(calls: RecordedCall[], retryAfterMs: number, lane: (c: RecordedCall) => string): void {
  calls.forEach((c, i) => {
    if (c.outcome !== 'rate_limited') return;
    const next = calls.slice(i + 1).find((n) => lane(n) === lane(c));
    expect(next, `a call after the 429 at ${c.at} ms`).toBeDefined();
    expect(next!.at - c.at).toBeGreaterThanOrEqual(retryAfterMs - 15);
  });
}

describe('a run driven from Slack (acceptance)', () => {
  it('starts from a slash command, reports in one thread, takes a reply as the next question, and ends with the kernel and a chart', async () => {
    let questionRequest: number | undefined;
    fx.service = await startSlackStack({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_ALLOWED_USERS: `${ALICE},${BOB}` },
      anthropic: {
        script: [
          // A kernel that is faster for real: only a significant gain is a new best (the baseline is not).
          reply(text('Trying a faster exp first.'), toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: FAST }), toolUse('evaluate', {})),
          endTurn('That is what I have for now.'),
          (req) => {
            questionRequest = req.index;
            return reply(text('Looking at the data movement.'), toolUse('evaluate', {}));
          },
        ],
        fallback: () => endTurn('Done.'),
      },
    });
    const { fake, sender } = fx.service;

    // 1. The slash command is acknowledged within Slack's 3 seconds; the thread root is the status card.
    const started = await sender.command({ text: 'start cpu_softmax target=50 budget=2 timeout=10m', user: ALICE, channel: CHANNEL, responseUrl: fake.responseUrl('start') });
    expect(started.status).toBe(200);
    expect(started.ms).toBeLessThan(3000);
    await fake.waitFor(() => fake.messages.length > 0, 10_000, 'the thread root');
    const root = fake.messages[0]!;
    await fake.waitFor(() => fake.callsOf('chat.update').length > 0, 10_000, 'the card to be drawn for the new run');
    const run = (await fx.db.store.runs.findByThread(CHANNEL, root.ts))!;
    expect(run).toMatchObject({ owner: ALICE, task: 'cpu_softmax', budgetEvals: 2 });
    const thread = () => fake.thread(CHANNEL, root.ts);

    // 2. The first evaluation (the real harness) makes a new best; then the model stops: a decision card.
    await fake.waitFor(() => thread().some((m) => json(m).includes('ks_ask_bank')), 120_000, 'the decision card');
    const newBest = thread().find((m) => m.text.startsWith(':trophy: New best') || m.text.includes('New best'));
    expect(newBest?.text).toMatch(/New best: \d+\.\d\dx vs baseline, \d+\.\d\dx vs torch — eval #1, 11\/11 scenarios correct/);
    const decision = thread().find((m) => json(m).includes('ks_ask_bank'))!;
    expect(json(decision)).toMatch(/Decision point: (stopped|claimed limit)/);
    expect(json(decision)).toContain('ks_stop_run');
    await fake.waitFor(() => json(fake.message(CHANNEL, root.ts)).includes('Waiting for a question'), 10_000, 'the card to show the wait');
    expect(json(fake.message(CHANNEL, root.ts))).toContain('eval 1/2');
    // Only the messages the design allows: the card, the new best, the decision card.
    expect(thread()).toHaveLength(3);
    expect(thread().map((m) => m.user)).toEqual([fake.botUserId, fake.botUserId, fake.botUserId]);

    // 3. A 429 storm starts now, on both edits and thread messages.
    fake.rateLimit('chat.update', { times: 4, retryAfter: 1 });
    fake.rateLimit('chat.postMessage', { times: 3, retryAfter: 1 });

    // 4. Mallory (not allowed) replies: refused privately. Bob replies; Slack delivers it twice.
    await sender.event(threadReply({ channel: CHANNEL, threadTs: root.ts, user: MALLORY, text: 'Just stop.' }));
    const bobReply = threadReply({ channel: CHANNEL, threadTs: root.ts, user: BOB, text: QUESTION });
    fake.userPosted({ channel: CHANNEL, ts: String(bobReply.ts), threadTs: root.ts, user: BOB, text: QUESTION });
    const first = await sender.event(bobReply);
    const again = await sender.event(bobReply, { eventId: first.eventId, retryNum: 1, retryReason: 'http_timeout' });
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(first.ms).toBeLessThan(3000);

    // 5. The question reaches the model in its next request, attributed to Bob; the run then ends on its budget.
    const done = await waitForRun(run.id, (r) => r?.status === 'finished', 120_000);
    expect(done.endReason).toBe('budget_evals');
    const asked = fx.service!.anthropic.requests[questionRequest!]!;
    // Bob replied to the open decision card: the agent reads which card his question answers.
    expect(userTexts(asked).join('\n')).toContain(`Question from ${BOB} (answering decision ${run.id}.d1): ${QUESTION}`);
    const questions = await fx.db.store.questions.forRun(run.id);
    expect(questions.filter((q) => q.source === 'human')).toHaveLength(1);
    expect(questions[0]).toMatchObject({ author: BOB, text: QUESTION, externalId: `${CHANNEL}:${bobReply.ts}` });
    expect(questions.some((q) => q.author === MALLORY)).toBe(false);
    expect(fake.callsOf('chat.postEphemeral').some((c) => c.args.user === MALLORY && String(c.args.text).includes('not on KernelSeek'))).toBe(true);

    // 6. The thread, in order, after the storm: the question (by Bob) once, then the summary with the kernel and the chart.
    // The kernel and the chart (a new best's and a decision card's evaluation files come before them).
    await fake.waitFor(() => fake.files.some((f) => f.filename === 'kernel.cpp') && fake.files.some((f) => f.filename.endsWith('.png')), 30_000, 'the kernel and the chart');
    await fx.service!.poster.idle();
    const messages = thread().filter((m) => m.user === fake.botUserId);
    // Bob's reply got a reaction saying it was taken, once.
    expect(fake.message(CHANNEL, String(bobReply.ts))!.reactions).toEqual(['inbox_tray']);
    const askedAt = messages.findIndex((m) => json(m).includes(`Question from <@${BOB}>`));
    const summaryAt = messages.findIndex((m) => /run\b.*finished|finished:/.test(m.text) && json(m).includes('Evaluations'));
    expect(messages.filter((m) => json(m).includes(`Question from <@${BOB}>`))).toHaveLength(1);
    expect(askedAt).toBeGreaterThan(messages.indexOf(decision));
    expect(summaryAt).toBeGreaterThan(askedAt);
    expect(messages[summaryAt]!.text).toMatch(/finished: best \d+\.\d\dx vs baseline, 2 evaluations/);
    expect(json(messages[summaryAt])).toContain('1 from people, 0 from the bank');
    expect(json(messages[summaryAt])).toContain('the evaluation budget is used up');

    const kernel = fake.files.find((f) => f.filename === 'kernel.cpp');
    expect(kernel?.threadTs).toBe(root.ts);
    expect(kernel!.content.toString('utf8')).toBe(FAST);
    const chart = fake.files.find((f) => f.filename.endsWith('.png'))!;
    expect(chart.threadTs).toBe(root.ts);
    expect(chart.content.subarray(1, 4).toString('ascii')).toBe('PNG');

    // 7. The card was edited in place to its final state; the storm cost retries, not updates.
    const card = fake.message(CHANNEL, root.ts)!;
    expect(json(card)).toContain('Finished');
    expect(json(card)).toContain('eval 2/2');
    expect(card.history.length).toBeGreaterThan(3);
    const updates = fake.callsOf('chat.update');
    const posts = fake.callsOf('chat.postMessage');
    expect(updates.filter((c) => c.outcome === 'rate_limited')).toHaveLength(4);
    expect(posts.filter((c) => c.outcome === 'rate_limited')).toHaveLength(3);
    expectRetryAfterRespected(updates, 1000, () => 'update');
    expectRetryAfterRespected(posts, 1000, (c) => String(c.args.channel));
    // Every thread message the poster was given arrived (none lost to the storm).
    expect(fx.service!.poster.stats().failed).toBe(0);
  }, 300_000);
});

async function waitForRun(id: string, check: (r: Run | undefined) => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await fx.db.store.runs.get(id);
    if (check(r)) return r!;
    if (Date.now() > deadline) throw new Error(`timed out waiting for run ${id}; last status ${r?.status} (${r?.endReason ?? ''}) error=${r?.error ?? ''}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}
