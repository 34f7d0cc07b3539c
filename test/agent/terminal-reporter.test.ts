import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createTerminalReporter } from '../../src/agent/terminal/terminal-reporter.js';
import type { EvaluationReport } from '../../src/agent/reporter.js';
import type { RunView } from '../../src/agent/run-view.js';

// What `kernelseek run` prints while an evaluation runs: a line rewritten in place on a terminal,
// nothing in a log file; the evaluation's headline afterwards in both.
const run = { id: 'ks-1' } as RunView;
const evaluation = { seq: 1, headline: 'eval #1: ok, 3/3 correct, 1.20x baseline' } as EvaluationReport;

function terminal(live: boolean, columns?: number) {
  const out = Object.assign(new PassThrough(), columns ? { columns } : {});
  let text = '';
  out.on('data', (d) => (text += String(d)));
  return { reporter: createTerminalReporter(out, { live }), text: () => text };
}

async function evaluate(reporter: ReturnType<typeof createTerminalReporter>) {
  await reporter.evaluationProgress({ run, seq: 1, progress: { phase: 'compile', status: 'ok', message: 'compiled in 1.0 s' } });
  await reporter.evaluationProgress({ run, seq: 1, progress: { phase: 'scenario', i: 0, n: 3, status: 'ok', message: 'rows_1024 ok 0.21 ms' } });
  await reporter.evaluationProgress({ run, seq: 1, progress: { phase: 'scenario', i: 1, n: 3, status: 'ok', message: 'rows_4096 ok 0.80 ms' } });
  await reporter.evaluationFinished({ run, evaluation });
}

describe('the terminal reporter during an evaluation', () => {
  it('on a terminal, rewrites one line with elapsed time, scenarios done and the last event, then erases it for the headline', async () => {
    const t = terminal(true);
    await evaluate(t.reporter);
    const draws = t.text().split('\r\x1b[2K');
    expect(draws[1]).toMatch(/^\[00:00\] evaluation #1: 0:00 elapsed — compiled in 1\.0 s$/);
    expect(draws[2]).toMatch(/^\[00:00\] evaluation #1: 0:00 elapsed, 1\/3 scenarios, ETA 0:00 — rows_1024 ok 0\.21 ms$/);
    expect(draws[3]).toMatch(/^\[00:00\] evaluation #1: 0:00 elapsed, 2\/3 scenarios, ETA 0:00 — rows_4096 ok 0\.80 ms$/);
    // The live line is erased before the headline, which starts a clean line of its own.
    expect(draws[4]).toBe('[00:00] eval #1: ok, 3/3 correct, 1.20x baseline\n');
    expect(t.text()).not.toContain('\n[');
  });

  it('cuts the live line to the terminal width so that it never wraps', async () => {
    const t = terminal(true, 40);
    await t.reporter.evaluationProgress({ run, seq: 2, progress: { phase: 'scenario', i: 0, n: 11, status: 'ok', message: 'a long message that does not fit in forty columns' } });
    expect(t.text().replace('\r\x1b[2K', '')).toHaveLength(39);
  });

  it('in a log file, prints no progress, only the headline', async () => {
    const t = terminal(false);
    await evaluate(t.reporter);
    expect(t.text()).toBe('[00:00] eval #1: ok, 3/3 correct, 1.20x baseline\n');
  });
});
