import { describe, expect, it } from 'vitest';
import { findLimitClaim } from '../../src/agent/decisions/claims.js';
import { detectDecision, type DecisionInput, type EvaluationFacts } from '../../src/agent/decisions/detect.js';

const ok = (seq: number, speedup: number, vsPeer = speedup * 0.8): EvaluationFacts => ({ seq, status: 'ok', correct: true, speedupVsBaseline: speedup, speedupVsBestPeer: vsPeer, scenarios: 'all' });
const bad = (seq: number, status: EvaluationFacts['status'] = 'incorrect'): EvaluationFacts => ({ seq, status, correct: false, speedupVsBaseline: null, speedupVsBestPeer: null, scenarios: 'all' });

function input(evaluations: EvaluationFacts[], overrides: Partial<DecisionInput> = {}): DecisionInput {
  return {
    evaluations,
    runScenarios: 'all',
    goalVs: 'best_peer',
    target: 2,
    targetAnnounced: null,
    lastDecisionEvalSeq: 0,
    plateauEvals: 3,
    failingEvals: 2,
    assistantText: null,
    endedWithoutToolCall: false,
    ...overrides,
  };
}

describe('decision points', () => {
  it('finds nothing while candidates keep improving', () => {
    expect(detectDecision(input([ok(1, 1.1), ok(2, 1.2), ok(3, 1.3)]))).toBeNull();
  });

  it('detects a plateau after N evaluations without a new best, counting from the last decision point', () => {
    const history = [ok(1, 1.5), ok(2, 1.4), bad(3), ok(4, 1.5)];
    expect(detectDecision(input(history))).toMatchObject({ trigger: 'plateau', evidence: { evals_since_gain: 3, best_evaluation: 1 } });
    expect(detectDecision(input(history, { lastDecisionEvalSeq: 2 }))).toBeNull();
  });

  it('detects failing candidates in a row', () => {
    expect(detectDecision(input([ok(1, 1.1), bad(2, 'compile_error'), bad(3)]))).toMatchObject({ trigger: 'failing', evidence: { failing_streak: 2, last_status: 'incorrect' } });
    expect(detectDecision(input([bad(1), ok(2, 1.1), bad(3)]))).toBeNull();
  });

  it('detects the target once per target value, against the task goal reference', () => {
    const history = [ok(1, 3.0, 2.1)];
    expect(detectDecision(input(history))).toMatchObject({ trigger: 'target_reached' });
    expect(detectDecision(input(history, { targetAnnounced: 2 }))).toBeNull();
    expect(detectDecision(input(history, { targetAnnounced: 2, target: 2.05 }))).toMatchObject({ trigger: 'target_reached' });
    expect(detectDecision(input([ok(1, 3.0, 1.9)]))).toBeNull();
    expect(detectDecision(input([ok(1, 3.0, 1.9)], { goalVs: 'baseline' }))).toMatchObject({ trigger: 'target_reached' });
  });

  it('does not count a quick-scenario pass as the run best', () => {
    const quick: EvaluationFacts = { ...ok(1, 5, 5), scenarios: 'quick' };
    expect(detectDecision(input([quick]))).toBeNull();
  });

  it('prefers a claimed limit over a plain stop, and a stop over a plateau', () => {
    const plateau = [ok(1, 1.5), ok(2, 1.4), ok(3, 1.4), ok(4, 1.4)];
    expect(detectDecision(input(plateau, { endedWithoutToolCall: true, assistantText: 'The kernel is now memory-bound, so this is as good as it gets.' }))).toMatchObject({
      trigger: 'claimed_limit',
      evidence: { claim: 'The kernel is now memory-bound, so this is as good as it gets.' },
    });
    expect(detectDecision(input(plateau, { endedWithoutToolCall: true, assistantText: 'Done for now.' }))).toMatchObject({ trigger: 'stopped' });
  });
});

describe('limit claims', () => {
  it.each([
    'We are already at the hardware limit for this access pattern.',
    'This is bandwidth-bound; further gains are impossible.',
    'I cannot make this any faster.',
    'The implementation is essentially optimal.',
    'We are close to the roofline peak now.',
    'There is no further room for improvement.',
    'We have hit diminishing returns.',
  ])('recognises “%s”', (sentence) => {
    expect(findLimitClaim(`Some context. ${sentence} More text.`)).toBe(sentence);
  });

  it.each(['Let me look at the kernel.', 'I will try unrolling the inner loop next.', 'The error was a missing bound check in the loop.'])('ignores “%s”', (sentence) => {
    expect(findLimitClaim(sentence)).toBeNull();
  });
});
