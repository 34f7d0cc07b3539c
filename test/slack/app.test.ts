import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { endTurn } from '../support/anthropic/script.js';
import { useServiceFixture } from '../support/fixture.js';
import { signSlackRequest, TEST_SIGNING_SECRET } from '../support/slack/signed-requests.js';
import { startSlackStack, type SlackStack } from '../support/slack/slack-stack.js';

// The Bolt app over real HTTP: request signing, the slash command's ack and its precise errors,
// authorisation. The engine is real; runs started here end their first turn at once.
const fx = useServiceFixture<SlackStack>('postgres', 'ks-slack-app-');

const CHANNEL = 'CKERNELS1';
const ALICE = 'UALICE001';

async function command(text: string, user = ALICE, channel = CHANNEL) {
  const id = `cmd-${Math.random().toString(36).slice(2)}`;
  const res = await fx.service!.sender.command({ text, user, channel, responseUrl: fx.service!.fake.responseUrl(id) });
  expect(res.status).toBe(200);
  await fx.service!.fake.waitFor((f) => f.responses.some((r) => r.id === id), 10_000, `a reply to "/kernelseek ${text}"`);
  const reply = fx.service!.fake.responses.find((r) => r.id === id)!.body;
  return { res, reply, text: String(reply.text), blocks: JSON.stringify(reply.blocks ?? []) };
}

describe('Slack app over HTTP', () => {
  it('rejects a forged signature and a replayed (stale) request, and acts on neither', async () => {
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir });
    const forged = await fx.service!.sender.command({ text: 'start cpu_softmax', user: ALICE, channel: CHANNEL, responseUrl: fx.service!.fake.responseUrl('forged') }, { secret: 'not-the-secret' });
    expect(forged.status).toBe(401);
    const stale = await fx.service!.sender.command(
      { text: 'start cpu_softmax', user: ALICE, channel: CHANNEL, responseUrl: fx.service!.fake.responseUrl('stale') },
      { timestamp: Math.floor(Date.now() / 1000) - 10 * 60 },
    );
    expect(stale.status).toBe(401);
    const body = JSON.stringify({ type: 'event_callback', event_id: 'EvX', event: { type: 'message', channel: CHANNEL, user: ALICE, text: 'hi', ts: '1.1', thread_ts: '1.0' } });
    const unsigned = await fx.service!.sender.raw(body, { 'content-type': 'application/json' });
    expect(unsigned.status).toBe(401);
    const tampered = await fx.service!.sender.raw(body.replace('hi', 'stop'), { 'content-type': 'application/json', ...signSlackRequest(TEST_SIGNING_SECRET, body) });
    expect(tampered.status).toBe(401);

    await delay(300);
    expect(fx.service!.fake.responses).toHaveLength(0);
    expect(fx.service!.fake.callsOf('chat.postMessage')).toHaveLength(0);
    expect(await fx.db.store.runs.list()).toHaveLength(0);
  });

  it('acks at once and answers malformed commands privately with how to fix them', async () => {
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir });
    const unknownTask = await command('start softmx');
    expect(unknownTask.res.ms).toBeLessThan(3000);
    expect(unknownTask.reply.response_type).toBe('ephemeral');
    expect(unknownTask.text).toMatch(/Unknown task `softmx`\. Did you mean `cpu_softmax`\? Tasks: .*`cpu_softmax`.*`flash_attn_fwd`.*`rmsnorm`/);
    expect((await command('start cpu_softmax budget=lots')).text).toMatch(/`budget=lots`: the budget is a whole number of evaluations.*e\.g\. `budget=200`/);
    expect((await command('start cpu_softmax arch=sm_90')).text).toMatch(/runs on the CPU; remove `arch=sm_90`/);
    expect((await command('start rmsnorm arch=sm_75')).text).toMatch(/supports `arch=sm_90`.*not `arch=sm_75`/);
    expect((await command('strat cpu_softmax')).text).toMatch(/Did you mean `\/kernelseek start`\?/);
    expect((await command('stop')).text).toMatch(/Which run\?/);
    expect((await command('stop ks-nosuchrun')).text).toMatch(/There is no run 'ks-nosuchrun'/);
    expect((await command('status')).text).toMatch(/No run has been started in this channel yet/);
    // Nothing was posted in the channel for any of them.
    expect(fx.service!.fake.callsOf('chat.postMessage')).toHaveLength(0);
  });

  it('answers help, tasks, list and bank', async () => {
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir });
    expect((await command('')).blocks).toContain('/kernelseek start <task>');
    expect((await command('help')).blocks).toContain('budget +N');
    const tasks = await command('tasks');
    expect(tasks.blocks).toContain('`cpu_softmax` (cpu)');
    expect(tasks.blocks).toContain('`flash_attn_fwd` (cuda sm_90');
    expect((await command('list')).text).toMatch(/No runs yet/);
    const bank = await command('bank');
    expect(bank.text).toMatch(/^Question bank: \d+ questions$/);
    expect(bank.blocks).toMatch(/layer shift|limit rejection/);
    const digest = await command('digest');
    expect(digest.text).toMatch(/Posted the digest of the last 24 hours in this channel \(no chart: nothing counted in the window\)/);
    const posted = fx.service!.fake.callsOf('chat.postMessage').filter((c) => c.args.channel === CHANNEL && c.outcome === 'ok');
    expect(posted).toHaveLength(1);
    expect(JSON.stringify(posted[0]!.args.blocks)).toContain('KernelSeek digest');
  });

  it('starts a run: the thread root is the status card, and the run is bound to that thread', async () => {
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir, anthropic: { script: [endTurn('I think this is as fast as it gets.')] } });
    const res = await fx.service!.sender.command({ text: 'start cpu_softmax target=1.2 budget=7 timeout=2m', user: ALICE, channel: CHANNEL, responseUrl: fx.service!.fake.responseUrl('start') });
    expect(res.status).toBe(200);
    expect(res.ms).toBeLessThan(3000);
    await fx.service!.fake.waitFor((f) => f.callsOf('chat.update').length > 0, 10_000, 'the status card');
    const root = fx.service!.fake.messages[0]!;
    expect(root.channel).toBe(CHANNEL);
    expect(root.threadTs).toBeUndefined();
    const [run] = await fx.db.store.runs.list();
    expect(run).toMatchObject({ task: 'cpu_softmax', owner: ALICE, origin: 'slack', slackChannel: CHANNEL, slackThreadTs: root.ts, target: 1.2, budgetEvals: 7, questionTimeoutSeconds: 120 });
    await fx.service!.fake.waitFor((f) => JSON.stringify(f.message(CHANNEL, root.ts)!.blocks).includes(run!.id), 10_000, 'the card to name the run');
    // The model ended its turn: a decision card with its buttons arrives in the thread.
    await fx.service!.fake.waitFor((f) => f.thread(CHANNEL, root.ts).some((m) => JSON.stringify(m.blocks).includes('ks_ask_bank')), 20_000, 'the decision card');
    expect(fx.service!.fake.responses.filter((r) => r.id === 'start')).toHaveLength(0);
  });

  it('stops a run from the decision card (owner or admin only) and from /kernelseek stop', async () => {
    fx.service = await startSlackStack({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_ALLOWED_USERS: `${ALICE},UBOB00001`, KERNELSEEK_ADMINS: 'UADMIN001' },
      anthropic: { fallback: () => endTurn('Done.') },
    });
    const { fake, sender } = fx.service;
    await sender.command({ text: 'start cpu_softmax', user: ALICE, channel: CHANNEL, responseUrl: fake.responseUrl('start') });
    await fake.waitFor((f) => f.messages.some((m) => JSON.stringify(m.blocks ?? []).includes('ks_stop_run')), 20_000, 'the decision card');
    const root = fake.messages[0]!;
    const card = fake.messages.find((m) => JSON.stringify(m.blocks ?? []).includes('ks_stop_run'))!;
    const [run] = await fx.db.store.runs.list();
    const press = (user: string) =>
      sender.action({ actionId: 'ks_stop_run', value: run!.id, user, channel: CHANNEL, messageTs: card.ts, threadTs: root.ts, responseUrl: fake.responseUrl(`stop-${user}`), messageBlocks: card.blocks! });

    await press('UBOB00001');
    await fake.waitFor((f) => f.callsOf('chat.postEphemeral').some((c) => c.args.user === 'UBOB00001'), 5000, 'Bob refused');
    expect((await fx.db.store.runs.get(run!.id))!.status).toBe('waiting');
    await press(ALICE);
    await fake.waitFor((f) => f.thread(CHANNEL, root.ts).some((m) => /stopped:/.test(m.text)), 10_000, 'the summary');
    expect(await fx.db.store.runs.get(run!.id)).toMatchObject({ status: 'stopped', endReason: 'stopped_by_user' });
    await fake.waitFor((f) => !JSON.stringify(f.message(CHANNEL, card.ts)!.blocks).includes('ks_stop_run'), 10_000, 'the buttons to give way');
    expect(JSON.stringify(fake.message(CHANNEL, card.ts)!.blocks)).toContain('The run has ended: stopped by a person.');

    // Stopping it again says what state it is in.
    expect((await command(`stop ${run!.id}`)).text).toMatch(/has already been stopped/);
  });

  it('refuses people and channels outside the allow-lists, saying whom to ask', async () => {
    fx.service = await startSlackStack({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_ALLOWED_USERS: ALICE, KERNELSEEK_ALLOWED_CHANNELS: CHANNEL, KERNELSEEK_ADMINS: 'UADMIN001' },
    });
    const mallory = await command('start cpu_softmax', 'UMALLORY1');
    expect(mallory.text).toMatch(/not on KernelSeek's list of allowed users.*<@UADMIN001>/);
    const elsewhere = await command('start cpu_softmax', ALICE, 'COTHER001');
    expect(elsewhere.text).toMatch(/runs cannot be started or seen here.*<#CKERNELS1>/);
    expect(fx.service!.fake.callsOf('chat.postMessage')).toHaveLength(0);
    expect(await fx.db.store.runs.list()).toHaveLength(0);
  });

  it('says how to fix it when the bot is not in the channel, and starts nothing', async () => {
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir, slack: { memberOf: ['COTHER001'] } });
    const reply = await command('start cpu_softmax');
    expect(reply.text).toMatch(/not a member of this channel\. Invite me with `\/invite @KernelSeek`/);
    expect(await fx.db.store.runs.list()).toHaveLength(0);
  });
});
