import { describe, expect, it } from 'vitest';
import { useServiceFixture } from '../support/fixture.js';
import { createStoredRun } from '../support/slack/runs.js';
import { startSlackStack, type SlackStack } from '../support/slack/slack-stack.js';

// Reads are authorised like writes: who may list runs, read a run's card and post the digest, by
// the allow-lists and by channel (a run is seen from its own channel, or by an admin). Runs are
// stored directly; every answer goes through real HTTP into the app.
const fx = useServiceFixture<SlackStack>('postgres', 'ks-slack-reads-');

const KERNELS = 'CKERNELS1';
const SECRET = 'CSECRET01';
const ALICE = 'UALICE001';
const BOB = 'UBOB00001';
const MALLORY = 'UMALLORY1';
const ADMIN = 'UADMIN001';

async function command(text: string, user: string, channel = KERNELS) {
  const id = `cmd-${Math.random().toString(36).slice(2)}`;
  const res = await fx.service!.sender.command({ text, user, channel, responseUrl: fx.service!.fake.responseUrl(id) });
  expect(res.status).toBe(200);
  await fx.service!.fake.waitFor((f) => f.responses.some((r) => r.id === id), 10_000, `a reply to "/kernelseek ${text}"`);
  const reply = fx.service!.fake.responses.find((r) => r.id === id)!.body;
  return `${String(reply.text)}\n${JSON.stringify(reply.blocks ?? [])}`;
}

async function twoRuns() {
  const here = await createStoredRun(fx.db.store, { id: 'ks-here0001', owner: BOB, slackChannel: KERNELS, slackThreadTs: '1700000000.000100' });
  const secret = await createStoredRun(fx.db.store, { id: 'ks-secret001', owner: ALICE, slackChannel: SECRET, slackThreadTs: '1700000000.000200' });
  const terminal = await createStoredRun(fx.db.store, { id: 'ks-terminal1', owner: 'terminal:alice', origin: 'terminal' });
  return { here, secret, terminal };
}

describe('who may see runs', () => {
  it('refuses an unlisted user list, status <run>, digest, tasks and bank — only help answers', async () => {
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir, env: { KERNELSEEK_ALLOWED_USERS: `${ALICE},${BOB}`, KERNELSEEK_ADMINS: ADMIN } });
    const { here, secret } = await twoRuns();
    for (const text of ['list', `status ${here.id}`, `status ${secret.id}`, 'status', 'digest', 'tasks', 'bank', `stop ${here.id}`]) {
      const answer = await command(text, MALLORY);
      expect(answer, text).toMatch(/:no_entry: You are not on KernelSeek's list of allowed users.*<@UADMIN001>/);
      expect(answer, text).not.toMatch(/ks-here0001|ks-secret001|ks-terminal1|UBOB00001|UALICE001/);
    }
    expect(await command('help', MALLORY)).toContain('/kernelseek start <task>');
    expect(fx.service.fake.callsOf('chat.postMessage')).toHaveLength(0);
    expect((await fx.db.store.runs.get(here.id))!.status).toBe('queued');
  });

  it("shows an allowed user this channel's runs only; another channel's run reads as unknown", async () => {
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir, env: { KERNELSEEK_ALLOWED_USERS: `${ALICE},${BOB}`, KERNELSEEK_ADMINS: ADMIN } });
    const { here, secret, terminal } = await twoRuns();
    const list = await command('list', BOB);
    expect(list).toContain(here.id);
    expect(list).not.toContain(secret.id);
    expect(list).not.toContain(terminal.id);
    expect(list).toMatch(/in this channel/);

    expect(await command(`status ${here.id}`, BOB)).toContain(here.id);
    const hidden = await command(`status ${secret.id}`, BOB);
    const missing = await command('status ks-nosuchrun', BOB);
    expect(hidden).toMatch(/There is no run 'ks-secret001' in this channel/);
    expect(hidden.split('\n')[0]!.replace(secret.id, 'ID')).toBe(missing.split('\n')[0]!.replace('ks-nosuchrun', 'ID'));
    expect(await command(`stop ${secret.id}`, BOB)).toMatch(/There is no run 'ks-secret001' in this channel/);
    expect((await fx.db.store.runs.get(secret.id))!.status).toBe('queued');
    // The run's owner reaches their own run from anywhere.
    expect(await command(`status ${secret.id}`, ALICE)).toContain(secret.id);

    // The digest covers every channel's runs: with admins configured, only they post it on demand.
    expect(await command('digest', BOB)).toMatch(/Only KernelSeek admins can post the digest.*<@UADMIN001>/);
    expect(fx.service.fake.callsOf('chat.postMessage')).toHaveLength(0);
  });

  it('shows an admin every run, from any channel, and lets them post the digest', async () => {
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir, env: { KERNELSEEK_ALLOWED_USERS: `${ALICE},${BOB}`, KERNELSEEK_ADMINS: ADMIN } });
    const { here, secret, terminal } = await twoRuns();
    const list = await command('list', ADMIN, 'CANYWHERE');
    for (const id of [here.id, secret.id, terminal.id]) expect(list).toContain(id);
    expect(list).toMatch(/every channel/);
    expect(await command(`status ${secret.id}`, ADMIN)).toContain(secret.id);
    expect(await command('digest', ADMIN)).toMatch(/Posted the digest/);
  });

  it('with no admins configured, any allowed user posts the digest, but only the owner stops a run', async () => {
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir, env: { KERNELSEEK_ALLOWED_USERS: `${ALICE},${BOB}` } });
    const run = await createStoredRun(fx.db.store, { id: 'ks-alices01', owner: ALICE, slackChannel: KERNELS, slackThreadTs: '1700000000.000300' });
    expect(await command('digest', BOB)).toMatch(/Posted the digest/);
    expect(await command(`stop ${run.id}`, BOB)).toMatch(/Only the run's owner \(<@UALICE001>\) or a KernelSeek admin can stop/);
    expect((await fx.db.store.runs.get(run.id))!.status).toBe('queued');
  });
});
