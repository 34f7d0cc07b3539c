import { PassThrough } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createTerminalReporter } from '../../src/agent/terminal/terminal-reporter.js';
import type { EvaluationReport } from '../../src/agent/reporter.js';
import type { RunView } from '../../src/agent/run-view.js';

// What `kernelseek run` prints while a run works: on a terminal a live line (what happens now,
// redrawn every tick, so it is never silent for long), in a log file one line per stage; the
// evaluation's headline and its first failure lines afterwards in both.
const run = { id: 'ks-1', autonomous: false } as RunView;
const evaluation = { seq: 1, headline: 'eval #1: ok, 3/3 correct, 1.20x baseline' } as EvaluationReport;
const open: ReturnType<typeof createTerminalReporter>[] = [];
afterEach(() => {
  for (const r of open.splice(0)) r.close();
});

function terminal(live: boolean, options: { columns?: number; verbose?: boolean; tickMs?: number } = {}) {
  const out = Object.assign(new PassThrough(), options.columns ? { columns: options.columns } : {});
  let text = '';
  out.on('data', (d) => (text += String(d)));
  const reporter = createTerminalReporter(out, { live, verbose: options.verbose, tickMs: options.tickMs ?? 60_000 });
  open.push(reporter);
  return { reporter, text: () => text };
}

async function evaluate(reporter: ReturnType<typeof createTerminalReporter>, report: EvaluationReport = evaluation) {
  await reporter.evaluationProgress({ run, seq: 1, progress: { phase: 'compile', status: 'ok', message: 'compiled in 1.0 s' } });
  await reporter.evaluationProgress({ run, seq: 1, progress: { phase: 'correctness', i: 0, n: 3, scenario: 'rows_1024', message: 'correctness rows_1024' } });
  await reporter.evaluationProgress({ run, seq: 1, progress: { phase: 'timing', i: 0, n: 3, scenario: 'rows_1024', message: 'timing rows_1024' } });
  await reporter.evaluationProgress({ run, seq: 1, progress: { phase: 'scenario', i: 0, n: 3, status: 'ok', message: 'rows_1024 ok 0.21 ms' } });
  await reporter.evaluationFinished({ run, evaluation: report });
}

describe('the terminal reporter during an evaluation', () => {
  it('on a terminal, rewrites one line with the stage, elapsed time and the last event, then erases it for the headline', async () => {
    const t = terminal(true);
    await evaluate(t.reporter);
    const draws = t.text().split('\r\x1b[2K');
    expect(draws[1]).toMatch(/^\[00:00\] . evaluation #1: 0:00 elapsed, compiled — compiled in 1\.0 s$/);
    expect(draws[2]).toMatch(/^\[00:00\] . evaluation #1: 0:00 elapsed, checking correctness 1\/3 — correctness rows_1024$/);
    expect(draws[3]).toMatch(/^\[00:00\] . evaluation #1: 0:00 elapsed, timing 1\/3 — timing rows_1024$/);
    expect(draws[4]).toMatch(/^\[00:00\] . evaluation #1: 0:00 elapsed, timing 1\/3, 1\/3 scenarios done — rows_1024 ok 0\.21 ms$/);
    // The live line is erased before the headline, which starts a clean line of its own.
    expect(draws.at(-1)).toBe('[00:00] eval #1: ok, 3/3 correct, 1.20x baseline\n');
  });

  it('cuts the live line to the terminal width so that it never wraps', async () => {
    const t = terminal(true, { columns: 40 });
    await t.reporter.evaluationProgress({ run, seq: 2, progress: { phase: 'scenario', i: 0, n: 11, status: 'ok', message: 'a long message that does not fit in forty columns' } });
    expect(t.text().replace('\r\x1b[2K', '')).toHaveLength(39);
  });

  it('in a log file, prints one line per stage, never one per scenario, then the headline', async () => {
    const t = terminal(false);
    await evaluate(t.reporter);
    expect(t.text()).toBe(
      [
        '[00:00]   evaluation #1: compiled in 1.0 s',
        '[00:00]   evaluation #1: checking correctness on 3 scenarios',
        '[00:00]   evaluation #1: timing 3 scenarios',
        '[00:00] eval #1: ok, 3/3 correct, 1.20x baseline',
        '',
      ].join('\n'),
    );
  });
});

describe('the terminal reporter between events', () => {
  it('keeps the live line moving while the model thinks: a redraw every tick, with the seconds', async () => {
    const t = terminal(true, { tickMs: 100 });
    await t.reporter.stepStarted!({ run, step: 4 });
    await delay(1150);
    const draws = t.text().split('\r\x1b[2K').filter(Boolean);
    // Drawn at once, then at every tick: the spinner turns and the seconds count up.
    expect(draws.length).toBeGreaterThanOrEqual(8);
    expect(draws[0]).toMatch(/thinking \(model step 5\)… 0 s$/);
    expect(draws.at(-1)).toMatch(/thinking \(model step 5\)… 1 s$/);
    expect(new Set(draws.map((d) => d.split(' ')[1])).size).toBeGreaterThan(1);
    await t.reporter.stepFinished({ run, step: 4, stopReason: 'tool_use', costUsd: 0, toolCalls: [] });
    const after = t.text().length;
    await delay(300);
    // Nothing in progress: no redraw.
    expect(t.text().length).toBe(after);
  });

  it('says when the bank will ask while it waits for a question, once: a redraw would wipe what a person is typing', async () => {
    const t = terminal(true, { tickMs: 100 });
    await t.reporter.decisionPoint({ run, decision: { id: 'ks-1.d1', trigger: 'stopped', reason: 'The agent ended its turn.', evidence: {}, deadline: new Date(Date.now() + 60_000) } });
    expect(t.text()).toMatch(/waiting for your question; the bank asks at .+$/);
    const drawn = t.text().length;
    await delay(350);
    expect(t.text().length).toBe(drawn);
  });
});

describe('what an evaluation says to a person', () => {
  const broken: EvaluationReport = {
    ...evaluation,
    headline: 'eval #1: compile_error, 0/3 correct',
    failure: ["kernel.cpp:1:70: error: 'undefined_symbol' was not declared in this scope", "kernel.cpp:1:87: error: expected primary-expression before ';' token"],
    details: 'eval #1: compile_error, 0/3 correct\n\nCompiler output:\nkernel.cpp:1:70: error: ...\nthe whole log',
  };

  it("shows the compiler's first errors under the headline, in a terminal and in a log file", async () => {
    for (const live of [true, false]) {
      const t = terminal(live);
      await t.reporter.evaluationFinished({ run, evaluation: broken });
      expect(t.text()).toContain("eval #1: compile_error, 0/3 correct\n    | kernel.cpp:1:70: error: 'undefined_symbol' was not declared in this scope\n    | kernel.cpp:1:87: error:");
      expect(t.text()).not.toContain('the whole log');
    }
  });

  it('prints the whole result with --verbose', async () => {
    const t = terminal(false, { verbose: true });
    await t.reporter.evaluationFinished({ run, evaluation: broken });
    expect(t.text()).toContain('    Compiler output:\n    kernel.cpp:1:70: error: ...\n    the whole log\n');
  });

  it('calls a new best on the quick subset what it is: not counted', async () => {
    const t = terminal(false);
    await t.reporter.newBest({ run, evaluation: { ...evaluation, seq: 3, speedupVsBaseline: 3.96, scenarioSet: 'quick' }, previousSpeedup: 2.35 });
    expect(t.text()).toBe('[00:00] new best on the quick subset (not counted): evaluation #3 at 3.96x vs baseline (was 2.35x)\n');
  });
});
