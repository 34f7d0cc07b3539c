import { describe, expect, it } from 'vitest';
import { evaluateExpression } from '../../src/harness/expression.js';

describe('evaluateExpression', () => {
  it('computes Python-style arithmetic over scenario parameters', () => {
    expect(evaluateExpression('4*B*H*Sq*Sk*D / (2 if_causal)'.replace(' if_causal', ''), { B: 1, H: 2, Sq: 3, Sk: 4, D: 5 })).toBe(240);
    expect(evaluateExpression('rows*cols <= 4_000_000', { rows: 1000, cols: 4000 })).toBe(true);
    expect(evaluateExpression('rows*cols <= 4_000_000', { rows: 1001, cols: 4000 })).toBe(false);
    expect(evaluateExpression('7 // 2 + 7 % 3 + 2 ** 3', {})).toBe(12);
    expect(evaluateExpression('-2 ** 2', {})).toBe(-4);
    expect(evaluateExpression('1 < x <= 3', { x: 3 })).toBe(true);
    expect(evaluateExpression('1 < x <= 3', { x: 4 })).toBe(false);
    expect(evaluateExpression('not causal or Sq == Sk', { causal: 1, Sq: 5, Sk: 5 })).toBe(true);
    expect(evaluateExpression('max(1, min(a, 8)) * sqrt(16)', { a: 3 })).toBe(12);
    expect(evaluateExpression('1e-6', {})).toBe(1e-6);
  });

  it('names the problem in an expression it cannot evaluate', () => {
    expect(() => evaluateExpression('rows * colz', { rows: 1 })).toThrow(/cannot evaluate "rows \* colz": unknown name 'colz'/);
    expect(() => evaluateExpression('rows +', { rows: 1 })).toThrow(/unexpected end/);
    expect(() => evaluateExpression('import os', {})).toThrow(/unexpected 'os'|unknown name/);
    expect(() => evaluateExpression('1 / 0', {})).toThrow(/division by zero/);
  });
});
