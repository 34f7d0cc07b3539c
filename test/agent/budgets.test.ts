import { describe, expect, it } from 'vitest';
import { priceOf } from '../../src/agent/model/pricing.js';
import { spentBudget } from '../../src/agent/turn/budgets.js';
import { MIN_OUTPUT_TOKENS, requestAllowance } from '../../src/agent/turn/step-limits.js';
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

describe('the worst case of one request against the dollar budget', () => {
  const opus = { model: 'claude-opus-4-6', budgetUsd: 1 };
  const { price } = priceOf(opus.model);
  const worst = (input: number, output: number) => (input * price.cacheWrite5m + output * price.output) / 1e6;

  it('keeps the allowance while the budget pays for it, lowers it when it does not, and refuses below the least worth sending', () => {
    expect(requestAllowance({ ...opus, costUsd: 0 }, 10_000, 16_000)).toMatchObject({ kind: 'ok', maxTokens: 16_000 });
    const lowered = requestAllowance({ ...opus, costUsd: 0.8 }, 10_000, 16_000);
    expect(lowered.kind).toBe('ok');
    if (lowered.kind !== 'ok') return;
    expect(lowered.maxTokens).toBeLessThan(16_000);
    expect(lowered.maxTokens).toBeGreaterThanOrEqual(MIN_OUTPUT_TOKENS);
    // The lowered request, billed at its worst, stays within the budget; one token more would not.
    expect(0.8 + worst(10_000, lowered.maxTokens)).toBeLessThanOrEqual(1);
    expect(0.8 + worst(10_000, lowered.maxTokens + 1)).toBeGreaterThan(1 - 1e-9);
    const spent = requestAllowance({ ...opus, costUsd: 1 - worst(10_000, MIN_OUTPUT_TOKENS) + 1e-6 }, 10_000, 16_000);
    expect(spent).toMatchObject({ kind: 'spent', message: expect.stringMatching(/^The dollar budget is used up: \$0\.\d\d of \$1\.00 spent/) });
  });
});
