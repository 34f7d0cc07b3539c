import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import type { Run } from '../../src/db/index.js';
import { endTurn, reply, text, toolUse, userTexts } from '../support/anthropic/script.js';
import { useServiceFixture } from '../support/fixture.js';
import { FAST } from '../agent/fixtures/kernels.js';
import type { FakeSlack, StoredMessage } from '../support/slack/fake-slack.js';
import { threadReply } from '../support/slack/signed-requests.js';
import { startSlackStack, type SlackStack } from '../support/slack/slack-stack.js';

// Issue 43's acceptance, one scripted run end to end through the fake Slack and the real Bolt app
// over signed HTTP (the real engine, the real harness on the cpu task, one evaluation):
//  - the thread's status line while the agent thinks, compiles, checks and times, cleared at the card;
//  - a decision card's choice button reaches the agent with the card's id;
//  - a reply written to that card after it closed gets "that question is closed; the open one is …"
//    in the thread and never reaches the agent; the reply form answers the open card; a form of a
//    closed card is refused in the form;
//  - *Continue from best* and `/kernelseek continue`/`fork` start linked runs from the best kernel;
//  - `/kernelseek chart`, a pasted run link (Work Object, then a plain unfurl), the flexpane, App Home,
//    the run page's redirect;
//  - no message of the whole run names a person by raw id or shows a server path (the agent's claim
//    of a limit quotes the data directory on purpose).
const fx = useServiceFixture<SlackStack>('postgres', 'ks-slack-agent-');

const CHANNEL = 'CKERNELS1';
const OTHER = 'CRANDOM01';
const ALICE = 'UALICE001';
const BOB = 'UBOB00001';
const CAROL = 'UCAROL001';
const PUBLIC = 'https://kernelseek.example.com';
const CHALLENGE = 'What would you expect to measure if this were not the limit, and have you measured it?';
const LATE = 'Yes, go on with that plan.';
const FORM = 'Which scenario is slowest, and why that one?';

const json = (m: StoredMessage | undefined) => JSON.stringify(m?.blocks ?? []) + (m?.text ?? '');
const cardsIn = (fake: FakeSlack, threadTs: string) => fake.messages.filter((m) => m.channel === CHANNEL && m.threadTs === threadTs && json(m).includes('Decision point:'));

/** Every string a person reads in `value` (texts of messages and blocks, titles, statuses, fields), not ids of things. */
function visibleStrings(value: unknown, key = ''): string[] {
  if (typeof value === 'string') return ['user_id', 'id', 'url', 'app_unfurl_url', 'value', 'action_id', 'block_id', 'callback_id', 'private_metadata', 'channel', 'channel_id', 'thread_ts', 'ts', 'user', 'trigger_id', 'token', 'file', 'filename', 'external_ref', 'link'].includes(key) ? [] : [value];
  if (Array.isArray(value)) return value.flatMap((v) => visibleStrings(v, key));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => (k === 'external_ref' ? [] : visibleStrings(v, k)));
  return [];
}

async function waitForRun(id: string, check: (r: Run | undefined) => boolean, what: string, timeoutMs = 60_000): Promise<Run> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await fx.db.store.runs.get(id);
    if (check(r)) return r!;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; run ${id} is ${r?.status} (${r?.endReason ?? ''})`);
    await delay(50);
  }
}

describe('a run in Slack as a 2026 agent (acceptance)', () => {
  it('shows its status, binds answers to their card, continues from its best, unfurls, charts, and never shows a raw id or a server path', async () => {
    const claim = `It is memory-bound now: my notes are in ${path.join(fx.dataDir, 'workspaces', 'notes.md')} and it cannot be made faster.`;
    fx.service = await startSlackStack({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_ALLOWED_USERS: `${ALICE},${BOB},${CAROL}`, KERNELSEEK_CONVERGE_STOPS: '20', KERNELSEEK_PUBLIC_URL: PUBLIC },
      statusRefreshMs: 250,
      anthropic: {
        script: [reply(text('Trying a faster exp first.'), toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: FAST }), toolUse('evaluate', {})), endTurn(claim)],
        fallback: () => endTurn('Nothing more for now.'),
      },
    });
    const { fake, sender, anthropic } = fx.service;
    const seenByModel = () => anthropic.requests.map((r) => userTexts(r).join('\n')).join('\n');

    // 1. Start; the evaluation runs; the thread's status line says what happens; the claim makes card d1.
    await sender.command({ text: 'start cpu_softmax target=50 timeout=10m budget=5', user: ALICE, channel: CHANNEL, responseUrl: fake.responseUrl('start') });
    await fake.waitFor(() => fake.messages.length > 0, 10_000, 'the thread root');
    const root = fake.messages[0]!;
    await fake.waitFor(() => cardsIn(fake, root.ts).length === 1, 120_000, 'decision card d1');
    const run = (await fx.db.store.runs.findByThread(CHANNEL, root.ts))!;
    const d1 = `${run.id}.d1`;
    const d2 = `${run.id}.d2`;
    const card1 = cardsIn(fake, root.ts)[0]!;
    expect(json(card1)).toContain('Decision point: claimed limit');
    expect(json(card1)).toContain(`"block_id":"ks_card:${d1}"`);
    await fake.waitFor(() => fake.callsOf('assistant.threads.setStatus').some((c) => c.args.status === ''), 10_000, 'the status line cleared at the card');
    const statuses = fake.callsOf('assistant.threads.setStatus').map((c) => String(c.args.status));
    expect(statuses).toEqual(expect.arrayContaining(['is thinking…', 'is compiling the candidate…']));
    expect(statuses.some((s) => /^is checking correctness \d+\/\d+…$/.test(s))).toBe(true);
    expect(statuses.some((s) => /^is timing \d+\/\d+…$/.test(s))).toBe(true);
    expect(fake.callsOf('assistant.threads.setStatus').every((c) => c.args.channel_id === CHANNEL && c.args.thread_ts === root.ts && c.outcome === 'ok')).toBe(true);

    // 2. Bob presses the card's choice: the agent gets it as his answer to d1, with the card's id.
    const choice = (card1.blocks as { type: string; elements?: { action_id: string; value: string }[] }[]).find((b) => b.type === 'actions')!.elements!.find((e) => e.action_id.startsWith('ks_answer_choice'))!;
    expect(choice.value).toBe(`${d1}:challenge`);
    await sender.action({ actionId: choice.action_id, value: choice.value, user: BOB, channel: CHANNEL, messageTs: card1.ts, threadTs: root.ts, responseUrl: fake.responseUrl('choice') });
    await fake.waitFor(() => seenByModel().includes(`Question from ${BOB} (answering decision ${d1}): ${CHALLENGE}`), 20_000, 'the choice to reach the agent');
    await fake.waitFor(() => cardsIn(fake, root.ts).length === 2, 20_000, 'decision card d2');
    await fake.waitFor(() => !json(fake.message(CHANNEL, card1.ts)).includes('ks_answer_choice'), 10_000, "d1's buttons to give way");
    expect(json(fake.message(CHANNEL, card1.ts))).toContain(`<@${BOB}> asked a question.`);

    // 3. Carol's reply was written while d1 was open, and reaches us after it closed: the thread says
    // so, pointing at d2, and the agent never reads it.
    const stored1 = (await fx.db.store.decisionCards.get(d1))!;
    const [sec, micro] = stored1.slackTs!.split('.') as [string, string];
    const writtenTs = `${sec}.${String(Number(micro) + 1).padStart(6, '0')}`;
    expect(Number(sec) * 1000 + Number(micro) / 1000).toBeLessThan(stored1.closedAt!.getTime());
    fake.userPosted({ channel: CHANNEL, ts: writtenTs, threadTs: root.ts, user: CAROL, text: LATE });
    await sender.event(threadReply({ channel: CHANNEL, threadTs: root.ts, user: CAROL, text: LATE, ts: writtenTs }));
    await fake.waitFor(() => fake.thread(CHANNEL, root.ts).some((m) => m.text.includes('that question (d1) is closed')), 15_000, 'the closed answer in the thread');
    const closed = fake.thread(CHANNEL, root.ts).find((m) => m.text.includes('that question (d1) is closed'))!;
    expect(closed.text).toContain(`<@${CAROL}>`);
    expect(closed.text).toContain(`<@${BOB}> answered it`);
    expect(closed.text).toMatch(new RegExp(`The open one is <https://kernelseek-test\\.slack\\.com/archives/${CHANNEL}/p\\d+\\|d2> \\(stopped\\)`));
    expect(await fx.db.store.questions.forRun(run.id)).toHaveLength(1);
    expect(fake.message(CHANNEL, writtenTs)!.reactions).toEqual([]);

    // 4. Carol answers d2 with its form; a form of the closed d1 is refused in the form itself.
    const card2 = cardsIn(fake, root.ts)[1]!;
    await sender.action({ actionId: 'ks_answer_reply', value: d2, user: CAROL, channel: CHANNEL, messageTs: card2.ts, threadTs: root.ts, responseUrl: fake.responseUrl('reply') });
    await fake.waitFor(() => fake.callsOf('views.open').length === 1, 15_000, 'the reply form');
    const form = fake.callsOf('views.open')[0]!.args.view as { callback_id: string; private_metadata: string };
    expect(JSON.parse(form.private_metadata)).toMatchObject({ cardId: d2 });
    const answered = await sender.viewSubmission({ viewId: 'V0KSFORM1', user: CAROL, callbackId: form.callback_id, privateMetadata: form.private_metadata, values: { ks_answer: { ks_answer: { type: 'plain_text_input', value: FORM } } } });
    expect(answered.status).toBe(200);
    await fake.waitFor(() => seenByModel().includes(`Question from ${CAROL} (answering decision ${d2}): ${FORM}`), 20_000, 'the form to reach the agent');
    const stale = await sender.viewSubmission({ viewId: 'V0KSFORM2', user: BOB, callbackId: form.callback_id, privateMetadata: JSON.stringify({ ...JSON.parse(form.private_metadata), cardId: d1 }), values: { ks_answer: { ks_answer: { type: 'plain_text_input', value: LATE } } } });
    expect(JSON.parse(stale.text)).toMatchObject({ response_action: 'errors', errors: { ks_answer: expect.stringContaining('That question (d1) is closed') } });
    await delay(300);
    expect(seenByModel()).not.toContain(LATE);

    // 5. Alice stops the run: the final card offers *Continue from best*; Carol presses it.
    await fake.waitFor(() => cardsIn(fake, root.ts).length === 3, 20_000, 'decision card d3');
    const stopTs = `${Math.floor(Date.now() / 1000) + 1}.000001`;
    await sender.event(threadReply({ channel: CHANNEL, threadTs: root.ts, user: ALICE, text: 'stop', ts: stopTs }));
    await fake.waitFor(() => fake.thread(CHANNEL, root.ts).some((m) => json(m).includes('ks_continue_run')), 20_000, 'the final card');
    const summary = fake.thread(CHANNEL, root.ts).find((m) => json(m).includes('ks_continue_run'))!;
    expect(json(summary)).toContain('Continue from best');
    await sender.action({ actionId: 'ks_continue_run', value: run.id, user: CAROL, channel: CHANNEL, messageTs: summary.ts, threadTs: root.ts, responseUrl: fake.responseUrl('continue') });
    const [child] = await (async () => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const children = await fx.db.store.runs.childrenOf(run.id);
        if (children.length === 1 || Date.now() > deadline) return children;
        await delay(50);
      }
    })();
    expect(child).toMatchObject({ parentRunId: run.id, task: 'cpu_softmax', owner: CAROL, slackChannel: CHANNEL });
    await fake.waitFor(() => anthropic.requests.some((r) => JSON.stringify(r.body.messages[0]).includes(`This run continues run ${run.id}`)), 20_000, "the child's first request");
    expect(await readFile(path.join(fx.dataDir, 'workspaces', child!.id, 'kernel.cpp'), 'utf8')).toBe(FAST);
    // Linked both ways, by links to the threads.
    await fake.waitFor(() => fake.thread(CHANNEL, root.ts).some((m) => m.text.includes(`continued this run as <https://`)) && fake.thread(CHANNEL, child!.slackThreadTs!).some((m) => m.text.includes(`Continues <https://`)), 15_000, 'the links both ways');
    expect(fake.thread(CHANNEL, root.ts).find((m) => m.text.includes('continued this run as'))!.text).toContain(`|${child!.id}>`);
    expect(fake.thread(CHANNEL, child!.slackThreadTs!).find((m) => m.text.includes('Continues'))!.text).toContain(`|${run.id}>`);
    await waitForRun(child!.id, (r) => r?.status === 'waiting', 'the child at its first decision point');
    await fx.service.engine.stopRun(child!.id, { by: CAROL });

    // 6. `/kernelseek fork` with another goal; `/kernelseek chart` in the run's thread.
    await sender.command({ text: `fork ${run.id} --goal 2`, user: ALICE, channel: CHANNEL, responseUrl: fake.responseUrl('fork') });
    await fake.waitFor(() => fake.responses.some((r) => r.id === 'fork'), 20_000, 'the fork answer');
    const fork = (await fx.db.store.runs.childrenOf(run.id)).find((r) => r.id !== child!.id)!;
    expect(fork).toMatchObject({ target: 2, parentRunId: run.id });
    await fx.service.engine.stopRun(fork.id, { by: ALICE });
    await sender.command({ text: `chart ${run.id}`, user: ALICE, channel: CHANNEL, responseUrl: fake.responseUrl('chart') });
    await fake.waitFor(() => fake.files.some((f) => f.filename === `${run.id}-chart.png`), 20_000, 'the chart');
    const chart = fake.files.find((f) => f.filename === `${run.id}-chart.png`)!;
    expect(chart.threadTs).toBe(root.ts);
    expect(chart.content.subarray(1, 4).toString('ascii')).toBe('PNG');
    expect(chart.initialComment).toMatch(/torch \(peer\) at \d\.\d\dx, goal 50\.0x vs torch at \d+\.\dx/);

    // 7. The run's link pasted in another channel unfurls as a Work Object; its flexpane lists the
    // evaluations; a workspace without Work Objects gets a plain unfurl; the link itself redirects.
    const url = `${PUBLIC}/runs/${run.id}`;
    await sender.event({ type: 'link_shared', channel: OTHER, user: BOB, message_ts: '1.000100', links: [{ domain: 'kernelseek.example.com', url }], event_ts: '1.000100' });
    await fake.waitFor(() => fake.unfurls.length === 1, 15_000, 'the Work Object');
    const entity = (fake.unfurls[0]!.payload as Record<string, unknown>[])[0]!;
    expect(fake.unfurls[0]).toMatchObject({ channel: OTHER, ts: '1.000100', kind: 'work_object' });
    expect(entity).toMatchObject({ entity_type: 'slack#/entities/task', app_unfurl_url: url, external_ref: { id: run.id } });
    expect(JSON.stringify(entity)).toMatch(/"key":"best","label":"Best","type":"string","value":"\d\.\d\dx vs baseline/);
    expect(JSON.stringify(entity)).toContain('"value":"50.0x vs torch"');
    await sender.event({ type: 'entity_details_requested', user: BOB, trigger_id: 't.1', link: { url, domain: 'kernelseek.example.com' }, entity_url: url, app_unfurl_url: url, external_ref: { id: run.id, type: 'kernelseek_run' }, user_locale: 'en-US', event_ts: '1.2' });
    await fake.waitFor(() => fake.callsOf('entity.presentDetails').length === 1, 15_000, 'the flexpane');
    expect(JSON.stringify(fake.callsOf('entity.presentDetails')[0]!.args.metadata)).toMatch(/"key":"history".*"#1: \d\.\d\dx/);
    fake.fail('chat.unfurl', { error: 'feature_not_enabled', match: (a) => Boolean(a.metadata) });
    await sender.event({ type: 'link_shared', channel: OTHER, user: BOB, message_ts: '1.000200', links: [{ domain: 'kernelseek.example.com', url }], event_ts: '1.000200' });
    await fake.waitFor(() => fake.unfurls.length === 2, 15_000, 'the plain unfurl');
    expect(fake.unfurls[1]).toMatchObject({ ts: '1.000200', kind: 'blocks' });
    expect(JSON.stringify(fake.unfurls[1]!.payload)).toContain(`KernelSeek run <https://kernelseek-test.slack.com/archives/${CHANNEL}/p`);
    const page = await fetch(`http://127.0.0.1:${fx.service.app.port}/runs/${run.id}`, { redirect: 'manual' });
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toMatch(new RegExp(`^https://kernelseek-test\\.slack\\.com/archives/${CHANNEL}/p`));

    // 8. App Home: Alice's runs and the team's best per task, linked to their threads.
    await sender.event({ type: 'app_home_opened', user: ALICE, channel: 'DALICE001', tab: 'home', event_ts: '1.3' });
    await fake.waitFor(() => fake.homes.has(ALICE), 15_000, 'the App Home');
    const home = JSON.stringify(fake.homes.get(ALICE));
    expect(home).toContain(`|${run.id}>`);
    expect(home).toContain(`|${fork.id}>`);
    expect(home).toContain("The team's bests per task");

    // 9. Nothing anyone was shown names a person by raw id or a path on the server.
    await fx.service.poster.idle();
    const shown = [
      ...fake.calls.filter((c) => !['upload', 'auth.test'].includes(c.method)).flatMap((c) => visibleStrings(c.args)),
      ...fake.responses.flatMap((r) => visibleStrings(r.body)),
    ];
    expect(shown.length).toBeGreaterThan(50);
    const rawIds = shown.filter((s) => /(?<![<@\w])[UW](?=[A-Z0-9]*\d)[A-Z0-9]{8,10}\b/.test(s));
    expect(rawIds).toEqual([]);
    const everything = JSON.stringify(fake.calls.map((c) => c.args)) + JSON.stringify(fake.responses);
    for (const serverPath of [fx.dataDir, REPO_ROOT, `${tmpdir()}/`]) expect(everything).not.toContain(serverPath);
    // The claim that quoted the data directory was shown, without it.
    expect(json(card1)).toContain('my notes are in …/notes.md');
  }, 300_000);
});
