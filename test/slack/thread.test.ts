import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { endTurn, userTexts } from '../support/anthropic/script.js';
import { useServiceFixture } from '../support/fixture.js';
import type { StoredMessage } from '../support/slack/fake-slack.js';
import { threadReply } from '../support/slack/signed-requests.js';
import { startSlackStack, type SlackStack } from '../support/slack/slack-stack.js';

// Steering a run from its thread: plain-word controls with their authorisation, asides, bot
// messages and edits ignored, questions exactly once, the decision card's buttons, and promoting a
// person's question into the bank by reaction, button and form. The model ends every turn at once,
// so the run sits at decision points and no candidate is evaluated.
const fx = useServiceFixture<SlackStack>('postgres', 'ks-slack-thread-');

const CHANNEL = 'CKERNELS1';
const ALICE = 'UALICE001';
const BOB = 'UBOB00001';
const CAROL = 'UCAROL001';
const ADMIN = 'UADMIN001';
const QUESTION = 'What would you have to believe for this kernel to be twice as fast?';

const json = (m: StoredMessage | undefined) => JSON.stringify(m?.blocks ?? []) + (m?.text ?? '');

describe('a run steered from its thread', () => {
  it('obeys controls from the people allowed to give them, ignores asides, bots and edits, and promotes a question into the bank', async () => {
    fx.service = await startSlackStack({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_ALLOWED_USERS: `${ALICE},${BOB},${CAROL}`, KERNELSEEK_ADMINS: ADMIN },
      anthropic: { fallback: () => endTurn('Done for now.') },
    });
    const { fake, sender } = fx.service;
    await sender.command({ text: 'start cpu_softmax timeout=10m', user: ALICE, channel: CHANNEL, responseUrl: fake.responseUrl('start') });
    await fake.waitFor(() => fake.messages.some((m) => json(m).includes('ks_ask_bank')), 30_000, 'the first decision card');
    const root = fake.messages[0]!;
    const run = (await fx.db.store.runs.findByThread(CHANNEL, root.ts))!;
    const runNow = () => fx.db.store.runs.get(run.id);

    let n = 0;
    async function say(user: string, text: string, extra: Record<string, unknown> = {}) {
      n += 1;
      const event = { ...threadReply({ channel: CHANNEL, threadTs: root.ts, user, text, ts: `${Number(root.ts) + n}.000000` }), ...extra };
      fake.userPosted({ channel: CHANNEL, ts: String(event.ts), threadTs: root.ts, user, text });
      const sent = await sender.event(event);
      expect(sent.status).toBe(200);
      return { ts: String(event.ts), eventId: sent.eventId, event };
    }
    const ephemeralTo = (user: string) => fake.callsOf('chat.postEphemeral').filter((c) => c.args.user === user);
    const settle = async () => {
      await delay(300);
      await fx.service!.poster.idle();
    };

    // Bob may ask questions but not control Alice's run (admins are configured).
    await say(BOB, 'pause');
    await fake.waitFor(() => ephemeralTo(BOB).length === 1, 15_000, 'the refusal');
    expect(String(ephemeralTo(BOB)[0]!.args.text)).toMatch(/Only the run's owner \(<@UALICE001>\) or a KernelSeek admin/);
    expect((await runNow())!.status).toBe('waiting');

    // status: the card, to Alice alone.
    await say(ALICE, 'status');
    await fake.waitFor(() => ephemeralTo(ALICE).length === 1, 15_000, 'the status card');
    expect(JSON.stringify(ephemeralTo(ALICE)[0]!.args.blocks)).toContain(run.id);

    // show N: an evaluation's whole result as a file in the thread (what the model read, for people);
    // an unknown one is said privately. (Seq 99: a number the run's own evaluations never reach here.)
    const broken = await fx.db.store.evaluations.createPending({ runId: run.id, seq: 99, task: 'cpu_softmax', jobId: `eval:${run.id}:99`, candidateHash: 'h99', source: '// k', scenarios: 'quick' });
    await fx.db.store.evaluations.complete(broken.id, {
      status: 'compile_error', correct: false, speedupVsBaseline: null, speedupVsBestPeer: null, gpu: null, arch: null, worker: 'test', harnessSeconds: 1, startedAt: null,
      result: {
        schema: 'kernelseek.eval/1', task: 'cpu_softmax', device: 'cpu', status: 'compile_error', correct: false, messages: ['compile failed; see compile.log'], scenarios: [],
        summary: { scenarios: 3, correct: 0, speedup_vs_baseline_geomean: null, speedup_vs_peer_geomean: {}, best_peer: null, pct_of_peak_median: null, seconds: 1 },
        compile: { seconds: 1, log: "kernel.cpp:1:70: error: 'undefined_symbol' was not declared in this scope\nthe rest of the log" },
      },
    });
    const filesBefore = fake.files.length;
    await say(BOB, 'show 99');
    await fake.waitFor(() => fake.files.length > filesBefore, 15_000, 'the evaluation file');
    const file = fake.files.at(-1)!;
    expect(file).toMatchObject({ filename: 'eval-99.txt', threadTs: root.ts });
    expect(file.content.toString()).toContain("Compiler output:\nkernel.cpp:1:70: error: 'undefined_symbol' was not declared in this scope\nthe rest of the log");
    expect(fake.thread(CHANNEL, root.ts).some((m) => m.text.includes('Evaluation #99 of') && m.text.includes('compile_error'))).toBe(true);
    await say(BOB, 'show 98');
    await fake.waitFor(() => ephemeralTo(BOB).some((c) => String(c.args.text).includes('no finished evaluation #98')), 15_000, 'the unknown evaluation');

    // Asides, bot messages and edits are ignored: no question, no reaction, no reply. Counted once
    // the replies above have settled (under load a status card's follow-up can land late).
    await settle();
    const before = fake.calls.length;
    await say(ALICE, '// Bob, have a look at this one\n(aside) lunch first');
    await say(BOB, 'Automated notice', { bot_id: 'B0OTHER01', user: undefined });
    await say(BOB, 'edited text', { subtype: 'message_changed' });
    await settle();
    expect(fake.calls.length).toBe(before);
    expect(await fx.db.store.questions.forRun(run.id)).toHaveLength(0);

    // budget +N adds evaluations and redraws the card; a malformed one says how to write it.
    const budget = await say(ALICE, 'budget +3');
    await fake.waitFor(() => fake.message(CHANNEL, budget.ts)!.reactions.includes('white_check_mark'), 15_000, 'the budget acknowledged');
    expect((await runNow())!.budgetEvals).toBe(53);
    await fake.waitFor(() => json(fake.message(CHANNEL, root.ts)).includes('eval 0/53'), 15_000, 'the card with the new budget');
    await say(ALICE, 'budget 3');
    await fake.waitFor(() => ephemeralTo(ALICE).some((c) => String(c.args.text).includes('budget +N')), 15_000, 'the budget hint');

    // pause; a question asked while paused waits (no model call); after resume, the model gets it
    // once, and a later question after it, in the order they were written.
    await say(ALICE, 'Pause.');
    await fake.waitFor(() => json(fake.message(CHANNEL, root.ts)).includes('Paused'), 15_000, 'the card to say Paused');
    const requestsBefore = fx.service!.anthropic.requests.length;
    const asked = await say(BOB, QUESTION);
    // The same message again under another event id (a second app connection): still one question.
    await sender.event(asked.event);
    await fake.waitFor(() => fake.message(CHANNEL, asked.ts)!.reactions.includes('inbox_tray'), 15_000, 'the question acknowledged');
    await settle();
    expect(fx.service!.anthropic.requests.length).toBe(requestsBefore);
    await say(ALICE, 'resume');
    await fake.waitFor(() => json(fake.message(CHANNEL, root.ts)).includes('Running'), 15_000, 'the card to say Running');
    const seen = () => fx.service!.anthropic.requests.slice(requestsBefore).map((r) => userTexts(r).join('\n'));
    // The follow-up is written once Bob's answer has reached the model: written while the first card
    // was still open and bound to it, it would be refused as closed whenever the delivery of Bob's
    // answer closed that card before the reply was read (bind-reply.ts: by design; CI saw it under load).
    await fake.waitFor(() => seen().some((t) => t.includes(QUESTION)), 15_000, 'the paused question to reach the model');
    const FOLLOW_UP = 'Which measurement would change your mind?';
    await say(CAROL, FOLLOW_UP);
    await fake.waitFor(() => seen().some((t) => t.includes(FOLLOW_UP)), 15_000, 'the follow-up to reach the model');
    const delivered = seen().join('\n');
    // Bob wrote while the first decision card was open: his reply answers that card, and says so.
    expect(delivered.split(`Question from ${BOB} (answering decision ${run.id}.d1): ${QUESTION}`)).toHaveLength(2);
    // Carol's follow-up answers the card open when she wrote it (the second, if it was already
    // posted), else it is a plain question.
    const carols = ['', ` (answering decision ${run.id}.d2)`].map((card) => `Question from ${CAROL}${card}: ${FOLLOW_UP}`);
    expect(carols.map((q) => delivered.split(q).length - 1).reduce((a, b) => a + b)).toBe(1);
    expect(delivered.indexOf(QUESTION)).toBeLessThan(delivered.indexOf(FOLLOW_UP));
    const humanQuestions = (await fx.db.store.questions.forRun(run.id)).filter((q) => q.source === 'human');
    expect(humanQuestions.map((q) => q.author)).toEqual([BOB, CAROL]);
    await fake.waitFor(() => fake.messages.some((m) => json(m).includes(`Question from <@${BOB}>`)), 15_000, 'the question-asked message');

    // Carol's follow-up may be delivered at the second decision point and close that card ("Carol
    // asked a question."): the card Bob presses is the one still open once her question has landed.
    await fake.waitFor(() => fake.messages.some((m) => json(m).includes(`Question from <@${CAROL}>`)), 15_000, "Carol's question-asked message");
    await settle();

    // The next decision card: Bob presses "Ask from the bank"; its buttons give way to a note.
    const decisionCards = () => fake.messages.filter((m) => m.threadTs === root.ts && JSON.stringify(m.blocks ?? []).includes('Decision point:'));
    await fake.waitFor(() => decisionCards().length >= 2 && json(decisionCards().at(-1)).includes('ks_ask_bank'), 10_000, 'the second decision card');
    const card = decisionCards().at(-1)!;
    const press = await sender.action({ actionId: 'ks_ask_bank', value: run.id, user: BOB, channel: CHANNEL, messageTs: card.ts, threadTs: root.ts, responseUrl: fake.responseUrl('bank'), messageBlocks: card.blocks! });
    expect(press.status).toBe(200);
    await fake.waitFor(() => ephemeralTo(BOB).some((c) => String(c.args.text).includes('The bank will ask')), 15_000, 'the confirmation to Bob');
    await fake.waitFor(() => fake.messages.some((m) => json(m).includes('Question from the bank')), 10_000, 'the bank question');
    await fake.waitFor(() => !json(fake.message(CHANNEL, card.ts)).includes('ks_ask_bank'), 15_000, 'the buttons to give way');
    expect(json(fake.message(CHANNEL, card.ts))).toContain('The bank asked a question.');
    // The first decision card was answered by Bob's question: its buttons are gone too.
    const first = decisionCards()[0]!;
    expect(json(first)).not.toContain('ks_ask_bank');
    expect(json(first)).toContain(`<@${BOB}> asked a question.`);
    const question = humanQuestions[0]!;

    // Promote Bob's question: Carol (not an admin) is refused; the admin's reaction offers the form.
    await sender.event({ type: 'reaction_added', user: CAROL, reaction: 'bank', item: { type: 'message', channel: CHANNEL, ts: asked.ts }, item_user: BOB, event_ts: '1.0' });
    await fake.waitFor(() => ephemeralTo(CAROL).length === 1, 15_000, 'Carol refused');
    expect(String(ephemeralTo(CAROL)[0]!.args.text)).toMatch(/Only KernelSeek admins/);
    await sender.event({ type: 'reaction_added', user: ADMIN, reaction: 'bank', item: { type: 'message', channel: CHANNEL, ts: asked.ts }, item_user: BOB, event_ts: '1.0' });
    await fake.waitFor(() => ephemeralTo(ADMIN).length === 1, 15_000, 'the offer to the admin');
    expect(JSON.stringify(ephemeralTo(ADMIN)[0]!.args.blocks)).toContain(`"value":"${run.id}:${question.id}"`);
    await sender.action({ actionId: 'ks_promote_question', value: `${run.id}:${question.id}`, user: ADMIN, channel: CHANNEL, messageTs: root.ts, threadTs: root.ts, responseUrl: fake.responseUrl('promote') });
    await fake.waitFor(() => fake.callsOf('views.open').length === 1, 15_000, 'the form');
    const view = fake.callsOf('views.open')[0]!.args.view as { callback_id: string; private_metadata: string };
    // Submitted without a decision point: the form says what is missing and nothing is added.
    const incomplete = await sender.viewSubmission({
      user: ADMIN,
      callbackId: view.callback_id,
      privateMetadata: view.private_metadata,
      values: { ks_kind: { ks_kind: { type: 'radio_buttons', selected_option: { value: 'limit_rejection' } } }, ks_triggers: { ks_triggers: { type: 'checkboxes', selected_options: [] } } },
    });
    expect(JSON.parse(incomplete.text)).toEqual({ response_action: 'errors', errors: { ks_triggers: 'Choose at least one decision point.' } });
    const complete = await sender.viewSubmission({
      user: ADMIN,
      callbackId: view.callback_id,
      privateMetadata: view.private_metadata,
      values: {
        ks_kind: { ks_kind: { type: 'radio_buttons', selected_option: { value: 'limit_rejection' } } },
        ks_triggers: { ks_triggers: { type: 'checkboxes', selected_options: [{ value: 'claimed_limit' }, { value: 'plateau' }] } },
      },
    });
    expect(complete.status).toBe(200);
    await fake.waitFor(() => fake.messages.some((m) => json(m).includes(`added question ${question.id} to the bank`)), 15_000, 'the promotion note');
    const promoted = (await fx.db.store.bank.active()).find((e) => e.originQuestionId === question.id);
    expect(promoted).toMatchObject({ kind: 'limit_rejection', triggers: ['claimed_limit', 'plateau'], source: 'promoted', promotedBy: ADMIN, text: QUESTION });

    // stop: the run ends and its summary closes the thread.
    await say(ALICE, 'stop');
    await fake.waitFor(() => fake.messages.some((m) => m.threadTs === root.ts && /stopped:/.test(m.text)), 10_000, 'the summary');
    expect((await runNow())).toMatchObject({ status: 'stopped', endReason: 'stopped_by_user' });
    const summary = fake.messages.find((m) => m.threadTs === root.ts && /stopped:/.test(m.text))!;
    expect(json(summary)).toContain('No candidate was correct on every scenario');
    expect(json(summary)).toContain('2 from people, 1 from the bank');
    await fake.waitFor(() => json(fake.message(CHANNEL, root.ts)).includes('Stopped'), 15_000, 'the final card');
    // A reply after the end is not passed on, and says why.
    await say(BOB, 'One more thing?');
    await fake.waitFor(() => ephemeralTo(BOB).some((c) => String(c.args.text).includes('has ended')), 15_000, 'the note that the run ended');
  }, 120_000);
});
