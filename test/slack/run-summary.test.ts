import { describe, expect, it } from 'vitest';
import { describeRun } from '../../src/agent/run-view.js';
import { summaryLines } from '../../src/agent/terminal/terminal-reporter.js';
import type { RunSummary } from '../../src/agent/index.js';
import type { Run } from '../../src/db/index.js';
import { renderRunSummary } from '../../src/slack/views/run-summary.js';

function runRow(over: Partial<Run>): Run {
  const now = new Date();
  return {
    id: 'ks-1', task: 'cpu_softmax', owner: 'U1', origin: 'slack', slackChannel: 'C1', slackThreadTs: '1.1', statusMessageTs: null, status: 'finished', endReason: 'budget_evals',
    arch: null, model: 'm', autonomous: false, target: 2, questionTimeoutSeconds: 60, budgetEvals: 10, budgetSteps: 10, budgetUsd: 1, budgetSeconds: 60,
    evalsUsed: 3, stepsUsed: 5, bestEvaluationId: 7, bestSpeedup: 1.4, bestSpeedupVsPeer: null, costUsd: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0,
    cacheWriteTokens: 0, parentRunId: null, state: {}, error: null, leaseOwner: null, leaseExpiresAt: null, createdAt: now, startedAt: now, updatedAt: now, finishedAt: now, ...over,
  };
}

const summary = (best: Partial<NonNullable<RunSummary['best']>>): RunSummary => ({
  status: 'finished', endReason: 'budget_evals', evaluations: 3, steps: 5, costUsd: 0, questions: { human: 0, bank: 1 }, elapsedSeconds: 10, workspace: '/w', error: null,
  best: { evaluationSeq: 2, speedupVsBaseline: 1.4, speedupVsBestPeer: null, file: '/w/best.cpp', commit: 'eval-2', ...best },
});

// Issue 14: a quick run's best is named as chosen on a subset, with what the full set said of it,
// wherever the final summary appears (the thread and the terminal).
describe("a quick run's final summary", () => {
  const view = describeRun(runRow({}));

  it('says the subset and that the best is correct on every scenario', () => {
    const s = summary({ scenarioSet: { evaluated: 3, total: 11 }, confirmation: { status: 'ok', correct: true, speedupVsBaseline: 1.37, scenarios: 11 } });
    const blocks = JSON.stringify(renderRunSummary(view, s, null).blocks);
    // The best on the subset is labelled quick and not counted; the full-set check is what counts.
    expect(blocks).toContain('Best kernel on the quick subset (3 of 11 scenarios, not counted): *1.40x*');
    expect(blocks).toContain('Chosen on 3 of 11 scenarios; on all 11: correct, *1.37x* vs baseline (counted).');
    expect(summaryLines('ks-1', s)).toContain('    chosen on 3 of 11 scenarios; on all 11: correct, 1.37x vs baseline (counted)');
    expect(summaryLines('ks-1', s).join('\n')).toMatch(/Best kernel on the quick subset: evaluation #2, 1\.40x vs baseline \(quick, 3 of 11 scenarios: not counted\)/);
    expect(renderRunSummary(view, { ...s, counted: { seq: 2, speedupVsBaseline: 1.37, speedupVsBestPeer: null, fullSetCheck: true } }, null).text).toMatch(/finished: best 1\.37x vs baseline/);
    expect(renderRunSummary(view, { ...s, counted: null }, null).text).toMatch(/best 1\.40x vs baseline on the quick subset \(not counted\)/);
  });

  it('says so, with the reason, when the best is not correct on the full set', () => {
    const s = summary({ scenarioSet: { evaluated: 3, total: 11 }, confirmation: { status: 'incorrect', correct: false, speedupVsBaseline: null, scenarios: 11, reason: 'r7-c33: y: max|cand-ref| = 0.3 exceeds the tolerance' } });
    const blocks = JSON.stringify(renderRunSummary(view, s, null).blocks);
    expect(blocks).toContain('on all 11 it is *not correct* (incorrect: r7-c33');
    expect(summaryLines('ks-1', s).join('\n')).toMatch(/on all 11 it is NOT correct \(incorrect: r7-c33/);
  });

  it('says nothing of a subset on a run over every scenario, and when the full set was not run, says that', () => {
    expect(JSON.stringify(renderRunSummary(view, summary({}), null).blocks)).not.toContain('scenarios;');
    const stopped = summary({ scenarioSet: { evaluated: 3, total: 11 }, confirmation: null });
    expect(JSON.stringify(renderRunSummary(view, stopped, null).blocks)).toContain('not evaluated on the full set');
  });
});
