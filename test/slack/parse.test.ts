import { describe, expect, it } from 'vitest';
import { canAsk, canControl, canPromote, canStart, type AccessPolicy } from '../../src/slack/auth.js';
import { parseSlashCommand } from '../../src/slack/listeners/commands/parse-command.js';
import { parseThreadReply } from '../../src/slack/listeners/messages/parse-reply.js';

const ok = (text: string) => {
  const r = parseSlashCommand(text);
  if (!r.ok) throw new Error(`expected ${text} to parse: ${r.error}`);
  return r.command;
};
const err = (text: string) => {
  const r = parseSlashCommand(text);
  if (r.ok) throw new Error(`expected ${text} to be refused, got ${JSON.stringify(r.command)}`);
  return r.error;
};

describe('parseSlashCommand', () => {
  it('reads start with every option', () => {
    expect(ok('start cpu_softmax target=1.2 budget=40 model=claude-sonnet-4-5 arch=sm_90 timeout=90s auto')).toEqual({
      kind: 'start',
      task: 'cpu_softmax',
      options: { target: 1.2, budget: 40, model: 'claude-sonnet-4-5', arch: 'sm_90', timeoutSeconds: 90, auto: true },
    });
    expect(ok('  START   rmsnorm  ')).toEqual({ kind: 'start', task: 'rmsnorm', options: { auto: false } });
    expect(ok('start rmsnorm target = 1.5x timeout=10m')).toMatchObject({ options: { target: 1.5, timeoutSeconds: 600 } });
    expect(ok('start rmsnorm auto=false')).toMatchObject({ options: { auto: false } });
  });

  it('reads the other commands; no text means help', () => {
    expect(ok('')).toEqual({ kind: 'help' });
    expect(ok('help')).toEqual({ kind: 'help' });
    expect(ok('status')).toEqual({ kind: 'status', runId: undefined });
    expect(ok('status KS-7F3A2C9D')).toEqual({ kind: 'status', runId: 'ks-7f3a2c9d' });
    expect(ok('stop ks-7f3a2c9d')).toEqual({ kind: 'stop', runId: 'ks-7f3a2c9d' });
    for (const k of ['list', 'tasks', 'bank', 'digest'] as const) expect(ok(k)).toEqual({ kind: k });
  });

  it('says how to fix every malformed start', () => {
    expect(err('start')).toMatch(/Name a task.*\/kernelseek tasks/);
    expect(err('start target=1.1')).toMatch(/task comes first/);
    expect(err('start Flash-Attn')).toMatch(/not a task name/);
    expect(err('start rmsnorm targt=1.1')).toMatch(/Unknown option `targt`\. Did you mean `target=1\.1`\?.*Valid options: target=<speedup>/);
    expect(err('start rmsnorm fast')).toMatch(/Unexpected `fast`.*Valid options/);
    expect(err('start rmsnorm target=fast')).toMatch(/`target=fast`: the target is a speedup.*e\.g\. `target=1\.1`/);
    expect(err('start rmsnorm target=0')).toMatch(/greater than 0/);
    expect(err('start rmsnorm budget=2.5')).toMatch(/whole number of evaluations/);
    expect(err('start rmsnorm budget=0')).toMatch(/from 1 to 10000/);
    expect(err('start rmsnorm arch=hopper')).toMatch(/looks like sm_90/);
    expect(err('start rmsnorm timeout=soon')).toMatch(/duration such as 90s, 10m or 2h/);
    expect(err('start rmsnorm timeout=0s')).toMatch(/duration/);
    expect(err('start rmsnorm model=')).toMatch(/model id/);
    expect(err('start rmsnorm auto=maybe')).toMatch(/takes no value/);
    expect(err('start rmsnorm budget=10 budget=20')).toMatch(/given twice/);
  });

  it('says how to fix the other commands', () => {
    expect(err('strat cpu_softmax')).toMatch(/Unknown command `strat`\. Did you mean `\/kernelseek start`\?/);
    expect(err('lsit')).toMatch(/Did you mean `\/kernelseek list`\?/);
    expect(err('stauts ks-aaaaaaaa')).toMatch(/Did you mean `\/kernelseek status`\?/);
    expect(err('frobnicate')).toMatch(/Commands: start, continue, fork, status, stop, chart, list, tasks, bank, digest, help/);
    // A word that is no typo of a command gets the list, not a guess.
    expect(err('frobnicate')).not.toMatch(/Did you mean/);
    expect(err('deploy')).not.toMatch(/Did you mean/);
    expect(err('stop')).toMatch(/Which run\?.*\/kernelseek list/);
    expect(err('stop the-run!')).toMatch(/not a run id/);
    expect(err('list everything')).toMatch(/takes no arguments; remove `everything`/);
    expect(err('status ks-aaaaaaaa ks-bbbbbbbb')).toMatch(/one run id/);
  });
});

describe('parseThreadReply', () => {
  it('reads control words only when they are the whole reply', () => {
    for (const w of ['stop', 'Stop.', 'PAUSE', 'resume!', 'status']) expect(parseThreadReply(w).kind).toBe('control');
    expect(parseThreadReply('stop using shared memory?')).toEqual({ kind: 'question', text: 'stop using shared memory?' });
    expect(parseThreadReply('<@UBOT> stop', 'UBOT')).toEqual({ kind: 'control', action: 'stop' });
  });

  it('reads budget +N and explains a malformed one', () => {
    expect(parseThreadReply('budget +50')).toEqual({ kind: 'budget', evals: 50 });
    expect(parseThreadReply('Budget + 20 evals')).toEqual({ kind: 'budget', evals: 20 });
    expect(parseThreadReply('budget 50')).toMatchObject({ kind: 'invalid', error: expect.stringMatching(/budget \+N/) });
    expect(parseThreadReply('budget +0')).toMatchObject({ kind: 'invalid' });
  });

  it('reads show N: an evaluation whose whole result to post', () => {
    for (const w of ['show 3', 'Show eval 3', 'show #3', 'eval 3', 'eval #3.']) expect(parseThreadReply(w)).toEqual({ kind: 'show', seq: 3 });
    expect(parseThreadReply('show me the slowest scenario')).toMatchObject({ kind: 'question' });
  });

  it('drops aside lines and ignores a reply that is only asides', () => {
    expect(parseThreadReply('// lunch?')).toEqual({ kind: 'ignore', reason: 'aside' });
    expect(parseThreadReply('(aside) nice one\n// agreed')).toEqual({ kind: 'ignore', reason: 'aside' });
    expect(parseThreadReply('// for Bob: watch this\nWhat bounds the slowest scenario?')).toEqual({
      kind: 'question',
      text: 'What bounds the slowest scenario?',
    });
    expect(parseThreadReply('   ')).toEqual({ kind: 'ignore', reason: 'empty' });
  });

  it('undoes Slack’s escaping in questions', () => {
    expect(parseThreadReply('is a &lt; b &amp;&amp; c &gt; d?')).toEqual({ kind: 'question', text: 'is a < b && c > d?' });
  });
});

describe('authorisation', () => {
  const open: AccessPolicy = { allowedUsers: [], allowedChannels: [], admins: [] };
  const strict: AccessPolicy = { allowedUsers: ['UALLOWED'], allowedChannels: ['CKERNELS'], admins: ['UADMIN'] };
  const run = { id: 'ks-aaaaaaaa', owner: 'UOWNER' };

  it('lets everyone start, ask and promote when nothing is configured, and only the owner stop', () => {
    expect(canStart(open, 'UANY', 'CANY').ok).toBe(true);
    expect(canAsk(open, 'UANY').ok).toBe(true);
    expect(canPromote(open, 'UANY').ok).toBe(true);
    expect(canControl(open, 'UOWNER', run).ok).toBe(true);
    expect(canControl(open, 'UANY', run)).toEqual({ ok: false, reason: expect.stringMatching(/owner \(<@UOWNER>\)/) });
  });

  it('applies the lists and says why, naming whom to ask', () => {
    const start = canStart(strict, 'USTRANGER', 'CKERNELS');
    expect(start).toEqual({ ok: false, reason: expect.stringMatching(/KERNELSEEK_ALLOWED_USERS.*<@UADMIN>/) });
    expect(canStart(strict, 'UALLOWED', 'CRANDOM')).toEqual({ ok: false, reason: expect.stringMatching(/Start it in <#CKERNELS>/) });
    expect(canStart(strict, 'UALLOWED', 'CKERNELS').ok).toBe(true);
    expect(canStart(strict, 'UADMIN', 'CKERNELS').ok).toBe(true);
    expect(canAsk(strict, 'UALLOWED').ok).toBe(true);
    expect(canAsk(strict, 'USTRANGER').ok).toBe(false);
  });

  it('lets the owner and admins control a run; others may still ask it questions', () => {
    const owned = { id: 'ks-aaaaaaaa', owner: 'UALLOWED' };
    expect(canControl(strict, 'UALLOWED', owned).ok).toBe(true);
    expect(canControl(strict, 'UADMIN', owned).ok).toBe(true);
    const other = canControl({ ...strict, allowedUsers: ['UALLOWED', 'UOTHER'] }, 'UOTHER', owned);
    expect(other).toEqual({ ok: false, reason: expect.stringMatching(/owner \(<@UALLOWED>\) or a KernelSeek admin/) });
    expect(canAsk({ ...strict, allowedUsers: ['UALLOWED', 'UOTHER'] }, 'UOTHER').ok).toBe(true);
    expect(canPromote(strict, 'UALLOWED').ok).toBe(false);
    expect(canPromote(strict, 'UADMIN').ok).toBe(true);
  });
});
