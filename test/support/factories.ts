import type { NewRun } from '../../src/db/index.js';

/** A valid run to insert, with small budgets; override what a test is about. */
export function newRunInput(overrides: Partial<NewRun> = {}): NewRun {
  return {
    task: 'cpu_softmax',
    owner: 'U0TEST',
    origin: 'terminal',
    model: 'claude-test',
    target: 1.0,
    questionTimeoutSeconds: 60,
    budgetEvals: 50,
    budgetSteps: 100,
    budgetUsd: 5,
    budgetSeconds: 3600,
    ...overrides,
  };
}
