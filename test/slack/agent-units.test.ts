import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO_ROOT } from '../../src/config/index.js';
import { checkQuestionText } from '../../src/questions/text-rules.js';
import { compileTerms } from '../../src/questions/terms.js';
import { parseSlashCommand } from '../../src/slack/listeners/commands/parse-command.js';
import { bindReply, compareTs, tsToMillis } from '../../src/slack/listeners/messages/bind-reply.js';
import { createPathScrubber, scrubStrings } from '../../src/slack/poster/server-paths.js';
import { cardFromBlockId, cardLabel, parseCardId } from '../../src/slack/views/card-ids.js';
import { DECISION_CHOICES } from '../../src/slack/views/decision-choices.js';
import { withMentions } from '../../src/slack/views/format.js';
import { runIdFromUrl, runPageUrl } from '../../src/slack/views/links.js';
import { statusForProgress } from '../../src/slack/reporter/live-status.js';

// The pure parts of issue 43: which card a reply answers, the guard against server paths, the new
// commands, card ids and run links, mentions for raw ids, the status line's words, the choices.

const at = (ts: string) => new Date(tsToMillis(ts));

describe('binding a thread reply to its card', () => {
  const cards = [
    { id: 'ks-a.d1', slackTs: '1700000100.000100', openedAt: at('1700000100.000000'), closedAt: at('1700000200.000000') },
    { id: 'ks-a.d2', slackTs: '1700000300.000100', openedAt: at('1700000300.000000'), closedAt: at('1700000500.000000') },
    // Reached, its message not recorded yet (the reporter's post is on its way): it counts from when it opened.
    { id: 'ks-a.d3', slackTs: null, openedAt: at('1700000600.000000'), closedAt: null },
  ];

  it('answers the card open when the reply was written', () => {
    expect(bindReply('1700000400.000000', cards)).toEqual({ kind: 'closed', cardId: 'ks-a.d2' });
    expect(bindReply('1700000600.500000', cards)).toEqual({ kind: 'open', cardId: 'ks-a.d3' });
    expect(bindReply('1700000550.000000', cards)).toEqual({ kind: 'unbound' });
    // Written while d1 was open, arrived after it closed: refused, whatever came after.
    expect(bindReply('1700000150.000000', cards)).toEqual({ kind: 'closed', cardId: 'ks-a.d1' });
    expect(bindReply('1700000199.999999', cards)).toEqual({ kind: 'closed', cardId: 'ks-a.d1' });
    // Written after d1 closed and before d2 was posted: a question between decision points.
    expect(bindReply('1700000250.000000', cards)).toEqual({ kind: 'unbound' });
    // Before any card.
    expect(bindReply('1700000000.000000', cards)).toEqual({ kind: 'unbound' });
    // In the same second as a card, after it by microseconds.
    expect(bindReply('1700000300.000101', cards)).toEqual({ kind: 'closed', cardId: 'ks-a.d2' });
    expect(bindReply('1700000300.000101', cards.slice(0, 2).map((c) => ({ ...c, closedAt: c.id === 'ks-a.d2' ? null : c.closedAt })))).toEqual({ kind: 'open', cardId: 'ks-a.d2' });
    // Not after d2 (Slack gives no two messages of a channel one ts): d1 had closed by then.
    expect(bindReply('1700000300.000100', cards)).toEqual({ kind: 'unbound' });
  });

  it('compares Slack ts exactly, beyond what a double holds', () => {
    expect(compareTs('1700000000.000002', '1700000000.000010')).toBe(-1);
    expect(compareTs('1700000000.1', '1700000000.099999')).toBe(1);
    expect(compareTs('1700000001.000000', '1700000000.999999')).toBe(1);
    expect(compareTs('1700000000.5', '1700000000.500000')).toBe(0);
    expect(tsToMillis('1700000000.123456')).toBe(1700000000123);
  });
});

describe('no server path reaches Slack', () => {
  const scrub = createPathScrubber([
    { path: '/data', label: '(data dir)' },
    { path: '/srv/kernelseek', label: '(kernelseek)' },
  ]);

  it('cuts absolute paths to their last part and leaves URLs, fractions, asides and the sandbox alone', () => {
    expect(scrub('/tmp/ks-build-x1/kernel.cpp:12:3: error: expected ;')).toBe('…/kernel.cpp:12:3: error: expected ;');
    expect(scrub('git init failed in /srv/kernelseek/.kernelseek/workspaces/ks-1: denied')).toBe('git init failed in …/ks-1: denied');
    expect(scrub('notes in `/home/alice/notes.md` and (/var/lib/x/y)')).toBe('notes in `…/notes.md` and (…/y)');
    expect(scrub('the data dir /data is full')).toBe('the data dir (data dir) is full');
    for (const kept of ['see https://example.com/runs/ks-1/x', 'timing 3/11', '// an aside/here', 'slack#/entities/task', 'edit /workspace/kernel.cpp', '<https://x.slack.com/archives/C1/p1|d2>']) {
      expect(scrub(kept)).toBe(kept);
    }
    expect(scrubStrings({ blocks: [{ text: { text: 'at /opt/cuda/include/x.h' } }], n: 3 }, scrub)).toEqual({ blocks: [{ text: { text: 'at …/x.h' } }], n: 3 });
  });
});

describe('people as mentions', () => {
  it("makes the person the engine names a mention, and never an id someone else wrote", () => {
    expect(withMentions('stopped by UALICE001')).toBe('stopped by <@UALICE001>');
    // A refusal or a crash's output quoting an id is not the engine naming a person (issue 39).
    expect(withMentions('The model refused to continue: ping W0123ABCD')).toBe('The model refused to continue: ping W0123ABCD');
    expect(withMentions('runtime_error: stopped by UALICE001 and others')).toBe('runtime_error: stopped by UALICE001 and others');
    expect(withMentions('USD UPPERCASEWORD ks-u12345678')).toBe('USD UPPERCASEWORD ks-u12345678');
  });
});

describe('the new commands', () => {
  const ok = (text: string) => {
    const r = parseSlashCommand(text);
    if (!r.ok) throw new Error(r.error);
    return r.command;
  };
  const err = (text: string) => {
    const r = parseSlashCommand(text);
    if (r.ok) throw new Error(`${text} parsed`);
    return r.error;
  };

  it('reads continue, fork (with --flags, = and the dash a phone types), chart and digest week', () => {
    expect(ok('continue ks-7f3a2c9d')).toEqual({ kind: 'continue', runId: 'ks-7f3a2c9d', fork: false, options: { auto: false } });
    expect(ok('continue ks-7f3a2c9d budget=20 auto')).toMatchObject({ options: { budget: 20, auto: true } });
    expect(ok('fork ks-7f3a2c9d --goal 1.5')).toMatchObject({ kind: 'continue', fork: true, options: { target: 1.5 } });
    expect(ok('fork ks-7f3a2c9d --goal=2x --gpu sm_100')).toMatchObject({ options: { target: 2, arch: 'sm_100' } });
    expect(ok('fork ks-7f3a2c9d \u2014goal 1.2 --arch SM_90')).toMatchObject({ options: { target: 1.2, arch: 'sm_90' } });
    expect(ok('chart KS-7F3A2C9D')).toEqual({ kind: 'chart', runId: 'ks-7f3a2c9d' });
    expect(ok('digest week')).toEqual({ kind: 'digest', window: 'week' });
    expect(ok('digest')).toEqual({ kind: 'digest' });
  });

  it('says how to fix them', () => {
    expect(err('continue')).toMatch(/Which run\? `\/kernelseek continue <run id>`/);
    expect(err('fork ks-7f3a2c9d')).toMatch(/A fork changes the goal or the GPU: .*--goal 1\.5.*`\/kernelseek continue ks-7f3a2c9d`/);
    expect(err('fork ks-7f3a2c9d --goal')).toMatch(/`--goal` needs a value/);
    expect(err('fork ks-7f3a2c9d --goal fast')).toMatch(/`target=fast`: the target is a speedup.*Usage: `\/kernelseek fork/);
    expect(err('continue ks-7f3a2c9d colour=red')).toMatch(/Unknown option `colour`.*Usage: `\/kernelseek continue/);
    expect(err('chart')).toMatch(/Which run\?/);
    expect(err('digest month')).toMatch(/a `day` \(the default\) or a `week`/);
    expect(err('contineu ks-7f3a2c9d')).toMatch(/Did you mean `\/kernelseek continue`\?/);
  });
});

describe('card ids and run links', () => {
  it('reads a card id, from a value or a block, and refuses anything else', () => {
    expect(parseCardId('ks-7f3a2c9d.d12')).toEqual({ runId: 'ks-7f3a2c9d', seq: 12 });
    for (const bad of ['ks-7f3a2c9d', 'ks-7f3a2c9d.d0', 'KS-1.d1', 'ks-1.d1; drop', '../x.d1']) expect(parseCardId(bad)).toBeUndefined();
    expect(cardLabel('ks-7f3a2c9d.d3')).toBe('d3');
    expect(cardFromBlockId('ks_card:ks-7f3a2c9d.d3')).toBe('ks-7f3a2c9d.d3');
    expect(cardFromBlockId('b')).toBeUndefined();
    expect(cardFromBlockId('ks_card:nonsense')).toBeUndefined();
  });

  it("knows a run's public link, and only its own", () => {
    expect(runPageUrl('https://ks.example.com/', 'ks-1abc')).toBe('https://ks.example.com/runs/ks-1abc');
    expect(runPageUrl(undefined, 'ks-1abc')).toBeUndefined();
    expect(runIdFromUrl('https://ks.example.com', 'https://KS.example.com/runs/ks-1abc/')).toBe('ks-1abc');
    expect(runIdFromUrl('https://ks.example.com/app', 'https://ks.example.com/app/runs/ks-1abc')).toBe('ks-1abc');
    for (const other of ['https://evil.example.com/runs/ks-1abc', 'https://ks.example.com/runs/ks-1abc/x', 'https://ks.example.com/runs/../etc', 'not a url']) {
      expect(runIdFromUrl('https://ks.example.com', other)).toBeUndefined();
    }
    expect(runIdFromUrl(undefined, 'https://ks.example.com/runs/ks-1abc')).toBeUndefined();
  });
});

describe("the status line's words", () => {
  it('counts scenarios from 1 and leaves the line alone for events it does not name', () => {
    expect(statusForProgress({ phase: 'correctness', i: 0, n: 11 })).toBe('is checking correctness 1/11…');
    expect(statusForProgress({ phase: 'timing', i: 10, n: 11 })).toBe('is timing 11/11…');
    expect(statusForProgress({ phase: 'compile', status: 'ok' })).toBe('is checking correctness…');
    expect(statusForProgress({ phase: 'compile', status: 'compile_error' })).toBeUndefined();
    expect(statusForProgress({ phase: 'scenario', i: 3, n: 11 })).toBeUndefined();
  });
});

describe("a decision card's choices", () => {
  it('are questions by the bank’s own rules: they ask, and name no technique and no number', async () => {
    const file = parse(await readFile(path.join(REPO_ROOT, 'questions', 'terms.yaml'), 'utf8')) as { terms: Record<string, string[]> };
    const terms = compileTerms(file.terms);
    for (const [trigger, choices] of Object.entries(DECISION_CHOICES)) {
      expect(choices.length, trigger).toBeGreaterThan(0);
      for (const c of choices) expect(checkQuestionText(c.text, [], terms), `${trigger}/${c.id}`).toEqual([]);
    }
  });
});
