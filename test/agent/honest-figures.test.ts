import { copyFile, cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTerminalReporter, describeRun, summaryLines, type DecisionReport, type EvaluationReport, type RunSummary } from '../../src/agent/index.js';
import { REPO_ROOT } from '../../src/config/index.js';
import { listingOf } from '../../src/cli/commands/runs.js';
import { computeDigest } from '../../src/digest/index.js';
import { chooseEvaluation } from '../../src/export/choose.js';
import { attributeGains } from '../../src/questions/index.js';
import { renderDecisionCard } from '../../src/slack/views/decision-card.js';
import { renderRunSummary } from '../../src/slack/views/run-summary.js';
import { renderStatusCard } from '../../src/slack/views/status-card.js';
import { endTurn, reply, toolUse, userTexts } from '../support/anthropic/script.js';
import { runKernelseek } from '../support/cli.js';
import { createTempDir, createTestDatabase, type TestDatabase } from '../support/db.js';
import { BROKEN, FAST } from './fixtures/kernels.js';
import { startEngine, waitFor, type EngineHarness } from './helpers.js';

// Acceptance (issue 42): a run whose quick-subset evaluation is better than its counted (full-set)
// best. Every surface shows the counted best — the bank's question, the decision cards, the status
// card, the summary in the terminal and in Slack, `kernelseek runs`, the digest, export — and the
// digest credits no question with the quick figure. A compile error shows its first lines in the
// terminal and on the status card, and `kernelseek show` prints the per-scenario table.
// The real harness on cpu_softmax, a scripted model, PostgreSQL (the CLI reads the same database).

/**
 * cpu_softmax with its quick subset moved to three of its largest scenarios. The shipped subset holds
 * r7-c33 and r64-c128, calls so small that on a loaded CI machine the call's overhead decided their
 * figures: FAST read 2.15 on that subset against 2.59 for the counted kernel on the full set, and the
 * run this test is about did not happen.
 */
const QUICK = ['r256-c1024', 'r512-c512', 'r1024-c128'];

/**
 * Fast (AVX2) everywhere, but doing its work twice over outside the three quick scenarios: a counted
 * best well above the baseline on the full set, and well below what FAST does on the subset. (Three
 * times over, the full set's interval came within reach of the baseline on a loaded CI machine: no
 * counted best, and the bank's first question had no best to state.)
 */
const SLOWER_OFF_QUICK = `${FAST.replace(/extern "C"(.*)\bsoftmax_rows\(/, 'static$1fast_rows(')}
extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  const bool quick = (rows == 256 && cols == 1024) || (rows == 512 && cols == 512) || (rows == 1024 && cols == 128);
  if (!quick) fast_rows(x, y, rows, cols);
  return fast_rows(x, y, rows, cols);
}
`;

/** A bank whose every question states the best, so its text shows which best the bank was given. */
const BANK = `schema: kernelseek.bank/1
questions:
  - id: best-stands-stopped
    kind: limit_rejection
    triggers: [stopped, plateau, failing, target_reached]
    placeholders: [best_speedup, best_vs_peer, peer]
    text: >-
      The best candidate stands at {best_speedup} against the baseline and {best_vs_peer} against
      {peer}. What would have to be true for it to go further?
  - id: best-stands-claimed
    kind: limit_rejection
    triggers: [claimed_limit]
    placeholders: [best_speedup]
    text: The best candidate stands at {best_speedup}. Which measurement shows the limit you named?
`;

let db: TestDatabase;
let tmp: { dir: string; remove(): Promise<void> };
let tasksDir: string;
let h: EngineHarness;

beforeAll(async () => {
  db = await createTestDatabase('postgres');
  tmp = await createTempDir('ks-honest-');
  tasksDir = path.join(tmp.dir, 'kernels');
});
afterAll(async () => {
  await h?.close();
  await db.dispose();
  await tmp.remove();
});

const fmt = (v: number) => `${v.toFixed(2)}x`;
const data = <T>(e: { data: unknown }) => e.data as T;

describe('a quick evaluation better than the counted best', () => {
  it('every surface shows the counted best; the digest credits only counted gains; a compile error shows its first lines', { timeout: 600_000 }, async () => {
    const bankDir = path.join(tmp.dir, 'bank');
    await mkdir(bankDir, { recursive: true });
    await writeFile(path.join(bankDir, 'bank.yaml'), BANK);
    await copyFile(path.join(REPO_ROOT, 'questions', 'terms.yaml'), path.join(bankDir, 'terms.yaml'));
    const taskDir = path.join(tasksDir, 'cpu_softmax');
    await cp(path.join(REPO_ROOT, 'kernels', 'cpu_softmax'), taskDir, { recursive: true });
    const yaml = await readFile(path.join(taskDir, 'task.yaml'), 'utf8');
    const moved = yaml.replace(/^ {2}quick: \[.*\]$/m, `  quick: [${QUICK.join(', ')}]`);
    expect(moved).not.toBe(yaml);
    await writeFile(path.join(taskDir, 'task.yaml'), moved);
    const started = new Date();
    h = await startEngine({
      store: db.store,
      dataDir: tmp.dir,
      bankDir,
      env: { KERNELSEEK_CONVERGE_STOPS: '2', KERNELSEEK_TASKS_DIR: tasksDir },
      server: {
        script: [
          // 1. Counted: correct on all 11 scenarios, fast on three of them.
          reply(toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: SLOWER_OFF_QUICK }), toolUse('evaluate', { scenarios: 'all' })),
          endTurn('Done, I think.'),
          // 2. On the quick subset only: faster than the counted best there, and never counted.
          reply(toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: FAST }), toolUse('evaluate', { scenarios: 'quick' })),
          // 3. A compile error.
          reply(toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: BROKEN }), toolUse('evaluate', { scenarios: 'quick' })),
          endTurn('Finished. The kernel is optimal.'),
        ],
        fallback: () => endTurn('Finished.'),
      },
    });
    const run = await h.engine.startRun({ task: 'cpu_softmax', owner: 'alice', origin: 'api', autonomous: true, target: 100 });
    const done = await waitFor('the run to end', () => db.store.runs.get(run.id), (r) => r?.status === 'finished', 500_000);
    expect(done!.endReason).toBe('converged');
    const evaluations = await db.store.evaluations.forRun(run.id);
    expect(evaluations.map((e) => [e.seq, e.scenarios, e.status, e.correct])).toEqual([
      [1, 'all', 'ok', true],
      [2, 'quick', 'ok', true],
      [3, 'quick', 'compile_error', false],
    ]);
    const counted = evaluations[0]!.speedupVsBaseline!;
    const quick = evaluations[1]!.speedupVsBaseline!;
    // The case of the issue: the quick figure is clearly above the counted one (3.49 against 2.62 with
    // three busy loops beside the test on this two-core machine).
    expect(quick).toBeGreaterThan(counted * 1.1);
    expect(counted).toBeGreaterThan(1.05);
    const countedText = fmt(counted);
    const quickText = fmt(quick);
    const noQuick = (text: string) => expect(text).not.toContain(quickText);

    // The bank's questions: the best they state is the counted one, before and after the quick result.
    const bankTexts = h.server.requests.flatMap((r) => userTexts(r)).filter((t) => t.startsWith('Question (from the question bank)'));
    expect(bankTexts).toHaveLength(2);
    for (const t of bankTexts) {
      expect(t).toContain(`stands at ${countedText}`);
      noQuick(t);
    }

    // Decision cards: the counted best in the evidence and on the card, and the evaluations it cites.
    const decisions = h.events.filter((e) => e.event === 'decisionPoint').map((e) => data<{ decision: DecisionReport }>(e).decision);
    expect(decisions.map((d) => d.trigger)).toEqual(['stopped', 'claimed_limit']);
    for (const d of decisions) {
      expect(d.evidence.best_speedup_vs_baseline).toBe(counted);
      const card = JSON.stringify(renderDecisionCard(describeRun(done!), d));
      expect(card).toContain(`Best vs baseline (counted)*\\n${countedText}`);
      noQuick(JSON.stringify(renderDecisionCard(describeRun(done!), { ...d, cited: [] }).blocks));
      expect(d.cited?.map((c) => c.seq)).toContain(1);
    }
    expect(decisions[1]!.cited!.find((c) => c.seq === 3)!.details).toMatch(/Compiler output:\n[\s\S]*error/);

    // The status card and `kernelseek runs`.
    const view = describeRun((await db.store.runs.get(run.id))!);
    expect(view.best).toMatchObject({ seq: 1, speedupVsBaseline: counted });
    expect(view.quickBest).toBeNull();
    const card = renderStatusCard(view);
    expect(JSON.stringify(card.blocks)).toContain(`*Best vs baseline (counted)*\\n${countedText} (eval #1)`);
    noQuick(JSON.stringify(card));
    expect(listingOf(view).best).toBe(counted);

    // The summary, in the terminal and in the thread.
    const finishedEvent = await waitFor('the summary', async () => h.events.find((e) => e.event === 'runFinished'), Boolean);
    const summary = data<{ summary: RunSummary }>(finishedEvent!).summary;
    expect(summary.counted).toMatchObject({ seq: 1, speedupVsBaseline: counted });
    expect(summary.best).toMatchObject({ evaluationSeq: 1, speedupVsBaseline: counted });
    const lines = summaryLines(run.id, summary).join('\n');
    expect(lines).toContain(`Best correct kernel: evaluation #1, ${countedText} vs baseline`);
    noQuick(lines);
    const slackSummary = renderRunSummary(view, summary, null);
    expect(slackSummary.text).toContain(`best ${countedText} vs baseline`);
    noQuick(JSON.stringify(slackSummary));

    // The quick result was reported, labelled: not as a new best, and said to be on the quick subset.
    const finishedEvals = h.events.filter((e) => e.event === 'evaluationFinished').map((e) => data<{ evaluation: EvaluationReport }>(e).evaluation);
    expect(finishedEvals[1]!.headline).toMatch(/^eval #2: ok, 3\/3 correct on the quick subset/);
    expect(h.events.filter((e) => e.event === 'newBest').map((e) => data<{ evaluation: EvaluationReport }>(e).evaluation.seq)).toEqual([1]);

    // The compile error: its first lines under the headline in the terminal, and on the status card.
    const broken = finishedEvals[2]!;
    expect(broken.failure!.length).toBeGreaterThan(0);
    expect(broken.failure![0]).toMatch(/error/);
    const out = new PassThrough();
    let printed = '';
    out.on('data', (d) => (printed += String(d)));
    const terminal = createTerminalReporter(out, { live: false });
    await terminal.evaluationFinished({ run: view, evaluation: broken });
    terminal.close();
    expect(printed).toContain(`eval #3: compile_error, 0/3 correct on the quick subset\n    | ${broken.failure![0]}`);
    const withError = JSON.stringify(renderStatusCard(view, { lastEvaluation: broken }).blocks);
    expect(withError).toContain('eval #3 (quick subset): 0/3 correct (compile_error)');
    expect(withError).toContain(broken.failure![0]!.replace(/'/g, "'").slice(0, 40));

    // The digest: bests are counted ones, and no question is credited with the quick figure.
    await attributeGains(db.store);
    const questions = await db.store.questions.forRun(run.id);
    for (const q of questions) {
      expect(q.bestAfter === null || q.bestAfter <= counted).toBe(true);
      if (q.evalSeqAtAsk >= 1) expect(q.gain ?? 1).toBe(1);
    }
    const digest = await computeDigest(db.store, { from: new Date(started.getTime() - 60_000), to: new Date(Date.now() + 60_000) });
    expect(digest.runs.list.find((r) => r.id === run.id)!.bestSpeedup).toBe(counted);
    expect(digest.tasks.find((t) => t.task === 'cpu_softmax')!.best!.speedupVsBaseline).toBe(counted);
    for (const q of digest.questions.top) expect(q.bestAfter).toBeLessThanOrEqual(counted);

    // Export: the counted best, verified.
    const chosen = await chooseEvaluation(db.store, run.id, { totalScenarios: 11 });
    expect([chosen.evaluation.seq, chosen.standing]).toEqual([1, 'verified']);

    // The CLI over the same database: `runs`, then `show` for the run and one evaluation as the model
    // read it, with the per-scenario table, intervals and verdicts.
    await h.close();
    const env = { KERNELSEEK_DATA_DIR: tmp.dir, DATABASE_URL: db.url!, KERNELSEEK_TASKS_DIR: tasksDir, LOG_LEVEL: 'silent', ANTHROPIC_API_KEY: 'sk-ant-x' };
    const runs = await runKernelseek(['runs', '--json'], env);
    expect((JSON.parse(runs.stdout) as { id: string; best: number }[]).find((r) => r.id === run.id)!.best).toBe(counted);
    const shown = await runKernelseek(['show', run.id], env);
    expect(shown.stderr).toBe('');
    expect(shown.stdout).toContain(`Counted best: ${countedText} vs baseline (eval #1).`);
    expect(shown.stdout).toContain('eval #2: ok, 3/3 correct on the quick subset');
    const one = await runKernelseek(['show', run.id, 'eval', '1'], env);
    expect(one.stderr).toBe('');
    expect(one.stdout).toMatch(/== eval #1 of ks-[a-z0-9]+: what the model read ==\nEvaluation #1 \(all scenarios\): ok; correct on 11\/11 scenarios\./);
    expect(one.stdout).toMatch(/scenario\s+status\s+ms\s+vs baseline \[95 %\] verdict\s+vs strongest peer \[95 %\] verdict/);
    expect(one.stdout).toMatch(/r64-c128\s+ok\s+[0-9.]+\s+[0-9.]+x( \[[0-9.]+-[0-9.]+\])? (faster|same|slower)?\s*torch /);
    expect(one.stdout.match(/^r\d+-c\d+ /gm)).toHaveLength(11);
    const three = await runKernelseek(['show', run.id, 'eval', '3'], env);
    expect(three.stdout).toMatch(/what the model read ==\nEvaluation #3 \(quick scenarios\): compile_error/);
    expect(three.stdout).toMatch(/Compiler output:\n[\s\S]*error/);
    const missing = await runKernelseek(['show', run.id, 'eval', '9'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/has no evaluation #9; it has #1, #2, #3/);
  });
});
