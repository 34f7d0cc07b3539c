import { describe, expect, it } from 'vitest';
import { createProgressTracker } from '../../src/harness/progress-tracker.js';

describe('the evaluation progress line', () => {
  it('shows elapsed time, scenarios done and an ETA from the pace so far', () => {
    let t = 0;
    const tracker = createProgressTracker(() => t);
    t = 3_000;
    expect(tracker.line({ phase: 'compile', status: 'ok', message: 'compiled in 3.0 s' })).toBe('0:03 elapsed — compiled in 3.0 s');
    expect(tracker.line({ phase: 'correctness', i: 0, n: 4, scenario: 'a', message: 'correctness a' })).toBe('0:03 elapsed, 0/4 scenarios — correctness a');
    t = 13_000; // the first scenario took 10 s: three more to go, 30 s
    expect(tracker.line({ phase: 'scenario', i: 0, n: 4, status: 'ok', message: 'a ok 1.2 ms' })).toBe('0:13 elapsed, 1/4 scenarios, ETA 0:30 — a ok 1.2 ms');
    t = 23_000;
    expect(tracker.line({ phase: 'scenario', i: 1, n: 4, status: 'incorrect', message: 'b incorrect' })).toBe('0:23 elapsed, 2/4 scenarios, ETA 0:20 — b incorrect');
    t = 3_723_000;
    expect(tracker.line({ phase: 'scenario', i: 3, n: 4, status: 'ok', message: 'd ok' })).toBe('1:02:03 elapsed, 4/4 scenarios — d ok');
  });
});
