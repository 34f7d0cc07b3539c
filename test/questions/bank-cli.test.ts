import { copyFile, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import type { Store } from '../../src/db/index.js';
import { lintBank, loadBank } from '../../src/questions/index.js';
import { runKernelseek } from '../support/cli.js';
import { createTempDir, createTestDatabase, type TestDatabase } from '../support/db.js';
import { newRunInput } from '../support/factories.js';
import { makeBankDir, TEST_TERMS } from './fixtures.js';

const SHIPPED = path.join(REPO_ROOT, 'questions');

describe('kernelseek bank lint', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  it('passes on the shipped bank and says what it checked', async () => {
    const r = await runKernelseek(['bank', 'lint'], {});
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok: \d+ valid question\(s\) in \d+ file\(s\), \d+ terms\.\n {2}triggers: plateau \d+, claimed_limit \d+, stopped \d+, failing \d+, target_reached \d+\n/);
  });

  it('fails naming file, line and reason for each problem', async () => {
    const tmp = await makeBankDir({
      'terms.yaml': TEST_TERMS,
      'a.yaml': `schema: kernelseek.bank/1
questions:
  - id: fine
    kind: layer_shift
    triggers: [plateau]
    text: Which layer have you not looked at yet?
  - id: fine
    kind: layer_shift
    triggers: [stopped]
    text: Why would the register count matter here?
`,
    });
    cleanups.push(tmp.remove);
    const r = await runKernelseek(['bank', 'lint', '--dir', tmp.dir], {}, { cwd: tmp.dir });
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n').slice(0, 2)).toEqual([
      'a.yaml:7: fine: duplicate id: already defined at a.yaml:3',
      `a.yaml:10: fine: names "register" (term 'register*', memory_spaces): a bank question must not supply a technique, instruction, library or hardware feature`,
    ]);
    expect(r.stdout).toContain('2 problem(s): 1 valid question(s) in 2 file(s), 5 terms.');
  });

  it('reports problems as JSON with --json', async () => {
    const tmp = await makeBankDir({ 'terms.yaml': TEST_TERMS, 'a.yaml': 'schema: kernelseek.bank/1\nquestions: [\n' });
    cleanups.push(tmp.remove);
    const r = await runKernelseek(['bank', 'lint', '--json', '--dir', tmp.dir], {}, { cwd: tmp.dir });
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { problems: { file: string; line: number; message: string }[] };
    expect(out.problems[0]).toMatchObject({ file: 'a.yaml', message: expect.stringMatching(/^invalid YAML/) });
  });
});

describe('kernelseek bank, promote and export (PostgreSQL)', () => {
  let t: TestDatabase;
  let store: Store;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await createTestDatabase('postgres');
    store = t.store;
    env = { DATABASE_URL: t.url! };
  });
  beforeEach(async () => {
    await t.reset();
  });
  afterAll(async () => {
    await t?.dispose();
  });

  async function runWithQuestions() {
    const run = await store.runs.create(newRunInput({ task: 'fixture', owner: 'U1', origin: 'slack', model: 'm', target: 1.5 }));
    await store.runs.transition(run.id, 'running');
    const outcomes = [1.0, 1.1, 1.21, 1.3];
    for (const [i, speedup] of outcomes.entries()) {
      const row = await store.evaluations.createPending({ runId: run.id, seq: i + 1, task: 'fixture', jobId: `${run.id}:${i + 1}`, candidateHash: `h${i}`, source: '//' });
      await store.evaluations.complete(row.id, {
        status: 'ok', correct: true, speedupVsBaseline: speedup, speedupVsBestPeer: null, result: null, gpu: null, arch: null, worker: 'w', harnessSeconds: 1, startedAt: new Date(),
      });
      if (i === 0) {
        // Asked after evaluation 1: the best goes from 1.0 to 1.21 over the next two.
        await store.questions.add({ runId: run.id, source: 'bank', bankId: 'part-not-looked-at', text: 'Which part of the system have you not looked at during this run?', author: 'bank', trigger: 'plateau', evalSeqAtAsk: 1, externalId: 'b1' });
        await store.questions.add({ runId: run.id, source: 'human', text: 'What is the machine doing while the slowest case runs?', author: 'U777', externalId: 'h1', evalSeqAtAsk: 1 });
        await store.questions.add({ runId: run.id, source: 'human', text: 'Use shared memory tiles.', author: 'U778', externalId: 'h2', evalSeqAtAsk: 1 });
        await store.questions.claimPending(run.id);
      }
    }
    const rows = await store.questions.forRun(run.id);
    const id = (ext: string) => rows.find((q) => q.externalId === ext)!.id;
    return { runId: run.id, bankQuestion: id('b1'), goodHuman: id('h1'), badHuman: id('h2') };
  }

  it('lists every entry with its asks, mean gain and last use, attributing gains first', async () => {
    await runWithQuestions();
    const r = await runKernelseek(['bank', '--json', '--k', '2'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as { id: string; kind: string; triggers: string[]; asks: number; meanGain: number | null; lastUsed: string | null }[];
    const shipped = (await lintBank(SHIPPED)).entries;
    expect(rows.map((e) => e.id)).toEqual(shipped.map((e) => e.id));
    const asked = rows.find((e) => e.id === 'part-not-looked-at')!;
    expect(asked).toMatchObject({ kind: 'layer_shift', asks: 1 });
    expect(asked.meanGain).toBeCloseTo(1.21, 12);
    expect(Date.parse(asked.lastUsed!)).toBeGreaterThan(Date.now() - 60_000);
    expect(rows.filter((e) => e.asks > 0)).toHaveLength(1);

    const table = await runKernelseek(['bank', '--k', '2'], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^part-not-looked-at +layer_shift +stopped,plateau +seed +1 +1\.21x +\d{4}-\d\d-\d\d \d\d:\d\d$/m);
    expect(table.stdout).toContain("People's questions: 2 asked, 2 attributed, mean gain 1.21x.");
  });

  it("promotes a person's question, lists it, and refuses what cannot join the bank", async () => {
    const { bankQuestion, goodHuman, badHuman } = await runWithQuestions();
    const ok = await runKernelseek(['bank', 'promote', String(goodHuman), '--kind', 'layer_shift', '--triggers', 'plateau,stopped', '--by', 'alice'], env);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`Promoted question ${goodHuman} as bank entry 'promoted-machine-doing-while-slowest' (layer_shift; plateau, stopped):`);
    expect(await store.bank.get('promoted-machine-doing-while-slowest')).toMatchObject({ source: 'promoted', originQuestionId: goodHuman, promotedBy: 'alice', triggers: ['plateau', 'stopped'] });

    const listed = JSON.parse((await runKernelseek(['bank', '--json'], env)).stdout) as { id: string; source: string }[];
    expect(listed.at(-1)).toMatchObject({ id: 'promoted-machine-doing-while-slowest', source: 'promoted' });

    const again = await runKernelseek(['bank', 'promote', String(goodHuman), '--kind', 'layer_shift', '--triggers', 'plateau'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`error: Question ${goodHuman} was already promoted as 'promoted-machine-doing-while-slowest'.\n`);

    const statement = await runKernelseek(['bank', 'promote', String(badHuman), '--kind', 'layer_shift', '--triggers', 'plateau'], env);
    expect(statement.code).toBe(1);
    expect(statement.stderr).toContain(`error: Question ${badHuman} cannot join the bank as written:`);
    expect(statement.stderr).toContain("is not a question: it must end with '?'");
    expect(statement.stderr).toContain('names "shared memory"');
    expect(statement.stderr).toContain('names "tiles"');

    const taken = await runKernelseek(
      ['bank', 'promote', String(badHuman), '--kind', 'limit_rejection', '--triggers', 'claimed_limit', '--id', 'part-not-looked-at', '--text', 'What result would prove your limit wrong?'],
      env,
    );
    expect(taken.stderr).toBe("error: Bank id 'part-not-looked-at' is already taken; choose another with --id.\n");

    const rephrased = await runKernelseek(
      ['bank', 'promote', String(badHuman), '--kind', 'limit_rejection', '--triggers', 'claimed_limit', '--id', 'what-would-disprove-it', '--text', 'What result would prove your limit wrong?'],
      env,
    );
    expect(rephrased.code).toBe(0);
    expect((await store.bank.get('what-would-disprove-it'))?.text).toBe('What result would prove your limit wrong?');
    expect((await store.questions.get(badHuman))?.text).toBe('Use shared memory tiles.');

    const fromBank = await runKernelseek(['bank', 'promote', String(bankQuestion), '--kind', 'layer_shift', '--triggers', 'plateau'], env);
    expect(fromBank.stderr).toBe(`error: Question ${bankQuestion} came from the bank (part-not-looked-at); only a person's question can be promoted.\n`);

    const badTrigger = await runKernelseek(['bank', 'promote', String(goodHuman), '--kind', 'layer_shift', '--triggers', 'plateu'], env);
    expect(badTrigger.stderr).toBe("error: Unknown trigger(s) 'plateu'. Use one or more of: plateau, claimed_limit, stopped, failing, target_reached.\n");
    const badKind = await runKernelseek(['bank', 'promote', String(goodHuman), '--kind', 'hint', '--triggers', 'plateau'], env);
    expect(badKind.stderr).toBe("error: Unknown kind 'hint'. Use one of: layer_shift, limit_rejection.\n");
    const missing = await runKernelseek(['bank', 'promote', '999999', '--kind', 'layer_shift', '--triggers', 'plateau'], env);
    expect(missing.stderr).toMatch(/^error: No question with id 999999\./);
    const notNumber = await runKernelseek(['bank', 'promote', 'abc', '--kind', 'layer_shift', '--triggers', 'plateau'], env);
    expect(notNumber.stderr).toBe("error: The question id must be a number (the questions table's id), got 'abc'.\n");

    expect((await store.bank.active()).map((e) => e.id).sort()).toEqual(['promoted-machine-doing-while-slowest', 'what-would-disprove-it']);
  });

  it('exports promoted entries as YAML that lints clean and loads once beside the shipped bank', async () => {
    const { runId, goodHuman } = await runWithQuestions();
    await runKernelseek(['bank', 'promote', String(goodHuman), '--kind', 'layer_shift', '--triggers', 'plateau', '--id', 'machine-doing', '--by', 'alice'], env);

    const dir = await createTempDir('ks-export-');
    try {
      for (const name of await readdir(SHIPPED)) await copyFile(path.join(SHIPPED, name), path.join(dir.dir, name));
      const r = await runKernelseek(['bank', 'export', '--out', 'promoted.yaml'], env, { cwd: dir.dir });
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('Wrote 1 question(s) to promoted.yaml.\n');
      const yaml = await readFile(path.join(dir.dir, 'promoted.yaml'), 'utf8');
      expect(yaml).toContain('schema: kernelseek.bank/1');
      expect(yaml).toContain('id: machine-doing');
      expect(yaml).toContain(`run: ${runId}`);
      expect(yaml).toContain('author: U777');
      expect(yaml).toContain('by: alice');

      const lint = await runKernelseek(['bank', 'lint', '--dir', dir.dir], {});
      expect(lint.stdout).toMatch(/^ok: /);
      const bank = await loadBank({ dir: dir.dir, store });
      expect(bank.entries.filter((e) => e.id === 'machine-doing')).toHaveLength(1);
      expect(bank.warnings).toEqual([]);

      const stdout = await runKernelseek(['bank', 'export'], env);
      expect(stdout.stdout).toContain('id: machine-doing');
      const all = await runKernelseek(['bank', 'export', '--all'], env);
      expect(all.stdout).toContain('id: part-not-looked-at');
    } finally {
      await dir.remove();
    }
  });
});
