import { describe, expect, it } from 'vitest';
import { createProgressTracker } from '../../src/harness/progress-tracker.js';

describe('the evaluation progress line', () => {
  it('shows elapsed time, the stage (compiling, correctness n/N, timing n/N) with its ETA, scenarios done and the last event', () => {
    let t = 0;
    const tracker = createProgressTracker(() => t);
    // Before the harness says anything, it is compiling; a redraw with no event moves the clock.
    t = 2_000;
    expect(tracker.line()).toBe('0:02 elapsed, compiling');
    t = 3_000;
    expect(tracker.line({ phase: 'compile', status: 'ok', message: 'compiled in 3.0 s' })).toBe('0:03 elapsed, compiled — compiled in 3.0 s');
    expect(tracker.line({ phase: 'correctness', i: 0, n: 4, scenario: 'a', message: 'correctness a' })).toBe('0:03 elapsed, checking correctness 1/4 — correctness a');
    t = 5_000; // two scenarios in 2 s: this one and one more to go, 2 s
    expect(tracker.line({ phase: 'correctness', i: 2, n: 4, scenario: 'c', message: 'correctness c' })).toBe('0:05 elapsed, checking correctness 3/4, ETA 0:02 — correctness c');
    t = 7_000;
    expect(tracker.line({ phase: 'timing', i: 0, n: 4, scenario: 'a', message: 'timing a' })).toBe('0:07 elapsed, timing 1/4 — timing a');
    t = 17_000; // the first scenario took 10 s: three more to go, 30 s
    expect(tracker.line({ phase: 'scenario', i: 0, n: 4, status: 'ok', message: 'a ok 1.2 ms' })).toBe('0:17 elapsed, timing 1/4, 1/4 scenarios done — a ok 1.2 ms');
    expect(tracker.line({ phase: 'timing', i: 1, n: 4, scenario: 'b', message: 'timing b' })).toBe('0:17 elapsed, timing 2/4, ETA 0:30, 1/4 scenarios done — timing b');
    t = 20_000;
    expect(tracker.line()).toBe('0:20 elapsed, timing 2/4, ETA 0:39, 1/4 scenarios done — timing b');
    expect(tracker.stage()).toMatchObject({ name: 'timing', at: 2, of: 4 });
    t = 3_723_000;
    expect(tracker.line({ phase: 'done', status: 'ok', message: 'ok after 3723 s' })).toBe('1:02:03 elapsed, done, 1/4 scenarios done — ok after 3723 s');
  });

  it('says so when the compile failed', () => {
    const tracker = createProgressTracker(() => 0);
    expect(tracker.line({ phase: 'compile', status: 'compile_error', message: 'compile failed' })).toBe('0:00 elapsed, compile failed — compile failed');
  });
});
