import { describe, expect, it } from 'vitest';
import { summaryLines } from '../../src/agent/terminal/terminal-reporter.js';
import { renderDigestBlocks } from '../../src/digest/blocks.js';
import { renderDigestText } from '../../src/digest/text.js';
import { renderStatusCard } from '../../src/slack/views/status-card.js';
import { describeRun } from '../../src/agent/run-view.js';
import { makeFigures, makeRun } from '../digest/figures-factory.js';
import type { Run } from '../../src/db/index.js';

function runRow(over: Partial<Run>): Run {
  const now = new Date();
  return {
    id: 'ks-1', task: 'cpu_softmax', owner: 'U1', origin: 'slack', slackChannel: 'C1', slackThreadTs: '1.1', statusMessageTs: null, status: 'running', endReason: null,
    arch: 'sm_90', model: 'm', autonomous: false, target: 1, questionTimeoutSeconds: 60, budgetEvals: 10, budgetSteps: 10, budgetUsd: 1, budgetSeconds: 60,
    evalsUsed: 0, stepsUsed: 0, bestEvaluationId: null, bestSpeedup: null, bestSpeedupVsPeer: null, costUsd: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0,
    cacheWriteTokens: 0, parentRunId: null, state: {}, error: null, leaseOwner: null, leaseExpiresAt: null, createdAt: now, startedAt: now, updatedAt: now, finishedAt: null, ...over,
  };
}

// Where a converged run (and a run waiting for a worker) is shown: the digest, the terminal summary, the status card.
describe('converged and waiting runs are named where people look', () => {
  it('the digest says converged', () => {
    const f = makeFigures({ runs: [makeRun(1, { state: 'finished', status: 'finished', endReason: 'converged' }), makeRun(2, { state: 'finished', status: 'finished', endReason: 'budget_evals' })] });
    const text = renderDigestText(f, { timeZone: 'UTC' });
    expect(text.match(/finished \(converged\)/g)).toHaveLength(1);
    const blocks = JSON.stringify(renderDigestBlocks(f, { timeZone: 'UTC' }));
    expect(blocks.match(/finished \(converged\)/g)).toHaveLength(1);
  });

  it('the terminal summary says how to continue it', () => {
    const lines = summaryLines('ks-abc', { status: 'finished', endReason: 'converged', best: null, evaluations: 0, steps: 3, costUsd: 0, questions: { human: 0, bank: 2 }, elapsedSeconds: 1, workspace: '/w', error: null });
    expect(lines[0]).toBe('Run ks-abc finished: converged: the agent kept stopping or claiming a limit with no new evaluation in between.');
    expect(lines).toContain('  Continue it with a question: kernelseek run --resume ks-abc');
    const budget = summaryLines('ks-abc', { status: 'finished', endReason: 'budget_steps', best: null, evaluations: 0, steps: 3, costUsd: 0, questions: { human: 0, bank: 2 }, elapsedSeconds: 1, workspace: '/w', error: null });
    expect(budget.some((l) => l.includes('--resume'))).toBe(false);
  });

  it('the status card shows a wait for a gpu-worker', () => {
    const run = runRow({ status: 'running', state: { waitingForWorker: 'waiting for a gpu-worker (sm_90): none attached' } });
    expect(JSON.stringify(renderStatusCard(describeRun(run)).blocks)).toContain('waiting for a gpu-worker (sm_90): none attached');
    expect(JSON.stringify(renderStatusCard(describeRun({ ...run, state: {} })).blocks)).not.toContain('gpu-worker');
  });
});
