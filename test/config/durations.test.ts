import { describe, expect, it } from 'vitest';
import { loadConfig, parseDuration } from '../../src/config/index.js';
import { ConfigError } from '../../src/core/errors.js';

describe('parseDuration (the ms library, bare numbers as seconds)', () => {
  it('reads the units people write, to seconds', () => {
    const cases: [string, number][] = [['90s', 90], ['10m', 600], ['2h', 7200], ['7d', 604800], ['1.5 hours', 5400], ['250ms', 0.25], ['45', 45], [' 5 m ', 300]];
    for (const [text, seconds] of cases) expect([text, parseDuration(text)]).toEqual([text, seconds]);
  });

  it('refuses what is not a duration instead of guessing', () => {
    for (const text of ['', 'soon', '-1h', '1e3', 'Infinity', '10 parsecs', '1h30m', 'x'.repeat(200)]) expect([text, parseDuration(text)]).toEqual([text, undefined]);
  });

  it('names the variable with a bad duration', () => {
    expect(() => loadConfig({ KERNELSEEK_WORKER_GRACE: 'a minute' }, { cwd: '/tmp' })).toThrow(ConfigError);
    expect(() => loadConfig({ KERNELSEEK_WORKER_GRACE: 'a minute' }, { cwd: '/tmp' })).toThrow(/KERNELSEEK_WORKER_GRACE: must be a duration such as 90s, 10m or 2h \(got "a minute"\)/);
    expect(loadConfig({ KERNELSEEK_WORKER_GRACE: '2 minutes' }, { cwd: '/tmp' }).queue.graceSeconds).toBe(120);
  });
});
