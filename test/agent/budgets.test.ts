import { describe, expect, it } from 'vitest';
import { spentBudget } from '../../src/agent/turn/budgets.js';
import type { Run } from '../../src/db/index.js';

const start = new Date('2026-01-01T00:00:00Z');
const run = (patch: Partial<Run>): Run =>
  ({
    evalsUsed: 0,
    budgetEvals: 10,
    stepsUsed: 0,
    budgetSteps: 10,
    costUsd: 0,
    budgetUsd: 5,
    budgetSeconds: 3600,
    startedAt: start,
    finishedAt: null,
    state: {},
    ...patch,
  }) as Run;
const at = (seconds: number) => new Date(start.getTime() + seconds * 1000);

describe('budgets', () => {
  it('ends a run on whichever budget is spent first', () => {
    expect(spentBudget(run({}), at(10))).toBeNull();
    expect(spentBudget(run({ evalsUsed: 10 }), at(10))).toBe('budget_evals');
    expect(spentBudget(run({ stepsUsed: 10 }), at(10))).toBe('budget_steps');
    expect(spentBudget(run({ costUsd: 5.01 }), at(10))).toBe('budget_usd');
    expect(spentBudget(run({}), at(3600))).toBe('budget_time');
  });

  it('does not count time spent waiting for a question against the wall-time budget', () => {
    expect(spentBudget(run({ state: { waitedMs: 600_000 } }), at(3600))).toBeNull();
    expect(spentBudget(run({ state: { waitedMs: 600_000 } }), at(4200))).toBe('budget_time');
    // A wait in progress counts as waiting too.
    expect(spentBudget(run({ state: { decision: { at: at(3000).toISOString() } } }), at(3900))).toBeNull();
  });
});
