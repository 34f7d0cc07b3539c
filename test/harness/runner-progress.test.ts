import { describe, expect, it } from 'vitest';
import { CappedOutput, tailOf } from '../../src/harness/capped-output.js';
import { parseProgressLine } from '../../src/harness/runner-progress.js';

describe('parseProgressLine', () => {
  it('reads the harness events of task-spec.md', () => {
    expect(parseProgressLine('{"event": "compile", "ok": true, "seconds": 1.367, "cached": false}')).toEqual({
      phase: 'compile',
      status: 'ok',
      message: 'compiled in 1.4 s',
    });
    expect(parseProgressLine('{"event": "compile", "ok": false, "seconds": 0.2, "cached": false}')).toMatchObject({ status: 'compile_error', message: 'compile failed' });
    expect(parseProgressLine('{"event": "phase", "phase": "timing", "id": "r64-c128", "i": 0, "n": 3}')).toEqual({
      phase: 'timing',
      i: 0,
      n: 3,
      scenario: 'r64-c128',
      message: 'timing r64-c128',
    });
    expect(
      parseProgressLine('{"event": "scenario", "id": "r7-c33", "i": 2, "n": 3, "status": "incorrect", "correct": false, "time_ms": null, "reason": "max error 3e-1 > tolerance 1e-6"}'),
    ).toMatchObject({ phase: 'scenario', scenario: 'r7-c33', status: 'incorrect', timeMs: null, message: 'r7-c33 incorrect max error 3e-1 > tolerance 1e-6' });
    expect(parseProgressLine('{"event": "done", "status": "ok", "correct": true, "seconds": 10.365}')).toEqual({
      phase: 'done',
      status: 'ok',
      message: 'ok after 10.4 s',
    });
  });

  it('leaves everything else to the stderr text: warnings, tracebacks, unknown or malformed events', () => {
    expect(parseProgressLine('warning: torch was built without MKL')).toBeUndefined();
    expect(parseProgressLine('{"event": "compile", "ok": ')).toBeUndefined();
    expect(parseProgressLine('{"event": "telemetry", "x": 1}')).toBeUndefined();
    expect(parseProgressLine('{"event": "scenario"}')).toBeUndefined();
    expect(parseProgressLine('[1, 2]')).toBeUndefined();
  });

  it('tolerates fields a newer harness adds', () => {
    expect(parseProgressLine('{"event": "scenario", "id": "a", "i": 0, "n": 1, "status": "ok", "time_ms": 0.5, "gbps": 12}')).toMatchObject({ scenario: 'a', timeMs: 0.5 });
  });
});

describe('CappedOutput', () => {
  it('keeps everything under the cap', () => {
    const out = new CappedOutput(100);
    out.append('hello ');
    out.append(Buffer.from('world'));
    expect(out.text()).toBe('hello world');
    expect(out.truncated).toBe(false);
  });

  it('keeps the head and the tail over the cap and says how much was dropped', () => {
    const out = new CappedOutput(20);
    out.append('HEAD-0123456789');
    for (let i = 0; i < 1000; i++) out.append(`line ${i}\n`);
    out.append('THE-END');
    const text = out.text();
    expect(out.truncated).toBe(true);
    expect(text.startsWith('HEAD-01234')).toBe(true);
    expect(text.endsWith('THE-END')).toBe(true);
    expect(text).toMatch(/\[\.\.\. \d+ bytes of output omitted \.\.\.\]/);
    const omitted = Number(/\[\.\.\. (\d+) bytes/.exec(text)![1]);
    expect(omitted + 20).toBe(out.totalBytes);
  });
});

describe('tailOf', () => {
  it('cuts at a line boundary near the limit', () => {
    expect(tailOf('a\nb\nc', 100)).toBe('a\nb\nc');
    expect(tailOf('first line\nsecond line\nthird', 15)).toBe('third');
  });
});
