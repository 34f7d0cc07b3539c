import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatBankProblem, lintBank, loadBank, KINDS, TRIGGERS, selectQuestion } from '../../src/questions/index.js';
import { REPO_ROOT } from '../../src/config/index.js';
import { makeBankDir, TEST_TERMS } from './fixtures.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const GOOD = `schema: kernelseek.bank/1
questions:
  - id: good-one
    kind: layer_shift
    triggers: [plateau]
    text: Which layer have you not looked at yet?
`;

/** A bank file whose one entry (starting at line 3) has the given fields. */
function bankFile(fields: string): string {
  return `schema: kernelseek.bank/1\nquestions:\n${fields}`;
}

async function lint(files: Record<string, string>) {
  const tmp = await makeBankDir({ 'terms.yaml': TEST_TERMS, ...files });
  cleanups.push(tmp.remove);
  const result = await lintBank(tmp.dir, { cwd: tmp.dir });
  return { ...result, lines: result.problems.map(formatBankProblem) };
}

describe('bank lint', () => {
  it('accepts a clean bank', async () => {
    const r = await lint({ 'a.yaml': GOOD });
    expect(r.problems).toEqual([]);
    expect(r.entries.map((e) => e.id)).toEqual(['good-one']);
    expect(r.entries[0]!.location).toBe('a.yaml:3');
  });

  it('rejects a duplicate id across files, naming both places', async () => {
    const r = await lint({
      'a.yaml': GOOD,
      'b.yaml': bankFile(`  - id: good-one
    kind: limit_rejection
    triggers: [claimed_limit]
    text: Did you measure that limit?
`),
    });
    expect(r.lines).toEqual(['b.yaml:3: good-one: duplicate id: already defined at a.yaml:3']);
  });

  it('rejects the same question written with different case and punctuation', async () => {
    const r = await lint({
      'a.yaml': GOOD,
      'b.yaml': bankFile(`  - id: good-two
    kind: layer_shift
    triggers: [stopped]
    text: "which LAYER have you not looked at, yet?"
`),
    });
    expect(r.lines).toEqual(['b.yaml:6: good-two: duplicate text: the same question as good-one (a.yaml:3)']);
  });

  it('rejects text that is not a question, and statements before a question', async () => {
    const r = await lint({
      'a.yaml': bankFile(`  - id: tells
    kind: layer_shift
    triggers: [plateau]
    text: Look at what the compiler produced.
  - id: tells-then-asks
    kind: layer_shift
    triggers: [plateau]
    text: Try a different design. What do you see then?
`),
    });
    expect(r.lines).toEqual([
      "a.yaml:6: tells: is not a question: it must end with '?'",
      'a.yaml:10: tells-then-asks: "Try a different design." is a statement: only measured evidence (a placeholder) may be stated, everything else must be asked',
    ]);
  });

  it('accepts a statement of measured evidence before the question', async () => {
    const r = await lint({
      'a.yaml': bankFile(`  - id: evidence-then-question
    kind: limit_rejection
    triggers: [plateau]
    placeholders: [pct_of_peak]
    text: The best candidate reaches {pct_of_peak} of peak. What is the rest of the device doing?
`),
    });
    expect(r.problems).toEqual([]);
  });

  it('rejects an unknown trigger at its line', async () => {
    const r = await lint({
      'a.yaml': bankFile(`  - id: typo
    kind: layer_shift
    triggers:
      - plateau
      - plateu
    text: Which layer have you not looked at yet?
`),
    });
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/^a\.yaml:7: typo: triggers\[1\]: Invalid option: expected one of "plateau"\|"claimed_limit"\|"stopped"\|"failing"\|"target_reached"$/);
  });

  it('rejects a bad kind at its line', async () => {
    const r = await lint({
      'a.yaml': bankFile(`  - id: bad-kind
    kind: layer-shift
    triggers: [plateau]
    text: Which layer have you not looked at yet?
`),
    });
    expect(r.lines).toEqual(['a.yaml:4: bad-kind: kind: Invalid option: expected one of "layer_shift"|"limit_rejection"']);
  });

  it('rejects unknown, undeclared and unused placeholders', async () => {
    const r = await lint({
      'a.yaml': bankFile(`  - id: unknown-placeholder
    kind: limit_rejection
    triggers: [plateau]
    placeholders: [pct_peak]
    text: At {pct_peak} of peak, what stops the device?
  - id: undeclared
    kind: limit_rejection
    triggers: [plateau]
    placeholders: [best_speedup]
    text: At {pct_of_peak} of peak, what stops the device from doing more?
`),
    });
    expect(r.lines[0]).toMatch(/^a\.yaml:7: unknown-placeholder: unknown placeholder \{pct_peak\}; known placeholders: evals, evals_since_gain, .*pct_of_peak/);
    expect(r.lines.slice(1)).toEqual([
      'a.yaml:12: undeclared: placeholder {pct_of_peak} is used in the text but not listed in placeholders',
      'a.yaml:12: undeclared: placeholder best_speedup is listed but the text never uses {best_speedup}',
    ]);
  });

  it('rejects a question that names a listed term, in any spelling the list covers', async () => {
    const r = await lint({
      'a.yaml': bankFile(`  - id: names-memory
    kind: layer_shift
    triggers: [plateau]
    text: Have you thought about Shared-Memory?
  - id: names-technique
    kind: layer_shift
    triggers: [plateau]
    text: Would tiles or vectorized loads help here?
  - id: names-instruction
    kind: layer_shift
    triggers: [plateau]
    text: Why not use cp.async for the loads?
  - id: innocent-words
    kind: layer_shift
    triggers: [plateau]
    text: Is the design versatile enough for every scenario?
`),
    });
    expect(r.lines).toEqual([
      'a.yaml:6: names-memory: names "Shared-Memory" (term \'shared memory\', memory_spaces): a bank question must not supply a technique, instruction, library or hardware feature',
      'a.yaml:10: names-technique: names "tiles" (term \'tile\', techniques): a bank question must not supply a technique, instruction, library or hardware feature',
      'a.yaml:10: names-technique: names "vectorized" (term \'vectori*\', techniques): a bank question must not supply a technique, instruction, library or hardware feature',
      'a.yaml:14: names-instruction: names "cp.async" (term \'cp.async\', instructions): a bank question must not supply a technique, instruction, library or hardware feature',
    ]);
    expect(r.entries.map((e) => e.id)).toEqual(['innocent-words']);
  });

  it('rejects a number stated outside a placeholder', async () => {
    const r = await lint({
      'a.yaml': bankFile(`  - id: states-number
    kind: limit_rejection
    triggers: [claimed_limit]
    text: Could this kernel reach 80 percent of peak?
`),
    });
    expect(r.lines).toEqual(['a.yaml:6: states-number: states a number; figures must come from measured evidence through a placeholder such as {pct_of_peak}']);
  });

  it('reports a YAML syntax error with its line and keeps checking the other files', async () => {
    const r = await lint({
      'a.yaml': GOOD,
      'broken.yaml': bankFile(`  - id: broken
    kind: layer_shift
    triggers: [plateau
    text: Which layer is next?
`),
    });
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/^broken\.yaml:\d+: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a \]$/);
    expect(Number(r.lines[0]!.split(':')[1])).toBeGreaterThanOrEqual(5);
    expect(r.entries.map((e) => e.id)).toEqual(['good-one']);
  });

  it('rejects a missing field, an unknown field and a file of unknown schema', async () => {
    const r = await lint({
      'a.yaml': bankFile(`  - id: no-text
    kind: layer_shift
    triggers: [plateau]
    hint: look at the compiler
`),
      'c.yaml': 'schema: kernelseek.task/1\nname: x\n',
    });
    expect(r.lines).toEqual([
      'a.yaml:3: no-text: text: Invalid input: expected string, received undefined',
      'a.yaml:3: no-text: Unrecognized key: "hint"',
      'c.yaml:1: schema must be kernelseek.bank/1 (questions) or kernelseek.terms/1 (the term list), got "kernelseek.task/1"',
    ]);
  });

  it('refuses to pass a bank without a term list', async () => {
    const tmp = await makeBankDir({ 'a.yaml': GOOD });
    cleanups.push(tmp.remove);
    const r = await lintBank(tmp.dir, { cwd: tmp.dir });
    expect(r.problems.map(formatBankProblem)).toEqual([
      `${tmp.dir}: no term list: add a file with schema kernelseek.terms/1 listing the terms questions must not name`,
    ]);
  });

  it('refuses to load a bank with problems, listing them', async () => {
    const tmp = await makeBankDir({ 'terms.yaml': TEST_TERMS, 'a.yaml': GOOD.replace('yet?', 'yet.') });
    cleanups.push(tmp.remove);
    await expect(loadBank({ dir: tmp.dir, cwd: tmp.dir })).rejects.toThrow(/a\.yaml:6: good-one: is not a question/);
  });
});

describe('the shipped bank', () => {
  const dir = path.join(REPO_ROOT, 'questions');

  it('passes lint', async () => {
    const r = await lintBank(dir);
    expect(r.problems.map(formatBankProblem)).toEqual([]);
    expect(r.terms.length).toBeGreaterThan(100);
  });

  it('has at least 40 questions of both kinds, every trigger covered by several of each kind where it makes sense', async () => {
    const { entries } = await lintBank(dir);
    expect(entries.length).toBeGreaterThanOrEqual(40);
    for (const kind of KINDS) expect(entries.filter((e) => e.kind === kind).length).toBeGreaterThanOrEqual(15);
    for (const trigger of TRIGGERS) {
      const fitting = entries.filter((e) => e.triggers.includes(trigger));
      expect(fitting.length, trigger).toBeGreaterThanOrEqual(5);
      expect(new Set(fitting.map((e) => e.kind)).size, trigger).toBe(2);
    }
  });

  it('always has a question for every trigger, even before anything is measured', async () => {
    const { entries } = await lintBank(dir);
    for (const trigger of TRIGGERS) {
      const pick = selectQuestion({ entries, trigger, evidence: {}, askedInRun: [], stats: new Map(), seed: 1 });
      expect(pick?.entry.placeholders, trigger).toEqual([]);
    }
  });
});
