import { describe, expect, it } from 'vitest';
import { digestHeadline, renderDigestBlocks, renderDigestText, SLACK_LIMITS, SLACK_LIST_LIMITS } from '../../src/digest/index.js';
import { makeFigures, makeQuestion, makeQuietFigures, makeRun, makeTask } from './figures-factory.js';

type Block = ReturnType<typeof renderDigestBlocks>[number];
const textsOf = (b: Block): string[] => {
  const out: string[] = [];
  if ('text' in b && b.text && typeof b.text === 'object' && 'text' in b.text) out.push(b.text.text);
  if ('fields' in b && b.fields) out.push(...b.fields.map((f) => f.text));
  if (b.type === 'context') out.push(...b.elements.map((e) => ('text' in e ? e.text : '')));
  return out;
};

/** Every limit Slack enforces on a message's blocks. */
function expectWithinSlackLimits(blocks: Block[]): void {
  expect(blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
  for (const b of blocks) {
    if (b.type === 'header') expect(b.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.headerText);
    if (b.type === 'section') {
      if (b.text) expect(b.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
      expect((b.fields ?? []).length).toBeLessThanOrEqual(SLACK_LIMITS.fields);
      for (const f of b.fields ?? []) expect(f.text.length).toBeLessThanOrEqual(SLACK_LIMITS.fieldText);
    }
    if (b.type === 'context') expect(b.elements.length).toBeLessThanOrEqual(SLACK_LIMITS.contextElements);
  }
}

describe('digest renderings', () => {
  it('lays out header, window, summary fields, tasks, questions and runs as Block Kit', () => {
    const f = makeFigures({
      tasks: [makeTask(1, { previousBest: 1.005 }), makeTask(2, { best: null, evaluations: 4, correct: 0 })],
      top: [makeQuestion(1, { source: 'bank', bankId: 'layer-memory', author: 'bank', final: false })],
    });
    const blocks = renderDigestBlocks(f, { timeZone: 'UTC', title: 'KernelSeek daily digest · 2026-03-14' });
    expect(blocks.map((b) => b.type)).toEqual(['header', 'context', 'section', 'divider', 'section', 'section', 'section', 'context']);
    const all = blocks.flatMap(textsOf).join('\n');
    expect(all).toContain('KernelSeek daily digest · 2026-03-14');
    expect(all).toContain('24 h to Sat 14 Mar, 09:00 UTC');
    expect(all).toContain('*task_1 (sm_90)*: *1.01x* baseline, 0.50x cudnn (up from 1.00x) · run `ks-run1` · 3 evals · $0.50');
    expect(all).toContain('*task_2 (sm_90)*: no correct candidate · 4 evals');
    expect(all).toContain('• *1.50x* so far after “What limits this kernel now?” — bank `layer-memory`, `ks-run1` task_1');
    expect(all).toContain('• `ks-run1` task_1 (sm_90) · active · best 1.20x · 3 evals · $0.50 · <@U0ALICE>');
    expect(all).toContain('*Questions*\n1 from people (1 person), 0 from the bank');
    expectWithinSlackLimits(blocks);
  });

  it('stays within Slack’s limits however much happened, and says what it left out', () => {
    const long = 'Why is the <kernel> & its `tail` slow? '.repeat(200);
    const f = makeFigures({
      tasks: Array.from({ length: 120 }, (_, i) => makeTask(i, { task: `t${i}_${'x'.repeat(300)}` })),
      runs: Array.from({ length: 300 }, (_, i) => makeRun(i, { owner: `someone-${'y'.repeat(400)}` })),
      top: Array.from({ length: 40 }, (_, i) => makeQuestion(i, { text: long })),
    });
    const blocks = renderDigestBlocks(f, { timeZone: 'UTC', title: 'T'.repeat(400) });
    expectWithinSlackLimits(blocks);
    const all = blocks.flatMap(textsOf).join('\n');
    expect(all).toContain(`…and ${120 - SLACK_LIST_LIMITS.tasks} more`);
    expect(all).toContain(`…and ${300 - SLACK_LIST_LIMITS.runs} more`);
    // Text people wrote cannot inject mentions or links.
    expect(all).not.toContain('<kernel>');
    expect(all).toContain('&lt;kernel&gt; &amp; its');
  });

  it('says in one line when nothing happened', () => {
    const quiet = makeQuietFigures();
    const blocks = renderDigestBlocks(quiet, { timeZone: 'UTC' });
    expect(blocks.flatMap(textsOf)).toContain('No runs, evaluations, model calls or questions in this window.');
    expect(blocks).toHaveLength(3);
    expect(digestHeadline(quiet, { timeZone: 'UTC' })).toBe('KernelSeek digest (24 h to Sat 14 Mar, 09:00 UTC): no activity.');
    expect(renderDigestText(quiet, { timeZone: 'UTC' })).toContain('No runs, evaluations, model calls or questions in this window.');
  });

  it('headlines the activity and the best task for notifications', () => {
    const f = makeFigures({ tasks: [makeTask(5), makeTask(30), makeTask(7, { best: null })] });
    expect(digestHeadline(f, { timeZone: 'Asia/Tokyo' })).toBe(
      'KernelSeek digest (24 h to Sat 14 Mar, 18:00 GMT+9): 1 active run, 3 evaluations, $0.50 model cost; best: task_30 (sm_90) 1.30x.',
    );
  });

  it('prints every line for the terminal, aligned', () => {
    const f = makeFigures({ tasks: Array.from({ length: 20 }, (_, i) => makeTask(i)), runs: Array.from({ length: 12 }, (_, i) => makeRun(i)) });
    const text = renderDigestText(f, { timeZone: 'UTC' });
    expect(text.split('\n')[0]).toBe('KernelSeek digest — 24 h to Sat 14 Mar, 09:00 UTC');
    expect(text).toMatch(/^Model +\$0\.50 over 4 steps \(1,000 input, 100 output tokens\)$/m);
    for (let i = 0; i < 20; i += 1) expect(text).toContain(`task_${i} (sm_90)`);
    for (let i = 0; i < 12; i += 1) expect(text).toMatch(new RegExp(`^  ks-run${i} `, 'm'));
    const taskRows = text.split('\n').filter((l) => /^ {2}task_\d+ \(sm_90\)/.test(l));
    expect(new Set(taskRows.map((l) => l.indexOf('x  ')))).toHaveProperty('size', 1);
  });
});
