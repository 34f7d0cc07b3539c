import type { Store } from '../../src/db/index.js';
import { at, insertEvaluation, insertQuestion, insertRun, insertStep } from './factories.js';

/**
 * One day of activity around the window [2026-03-13T09:00Z, 2026-03-14T09:00Z), with rows on both
 * edges of it. The expected figures are written out by hand in compute.test.ts.
 */
export const WINDOW = { from: at('2026-03-13T09:00:00Z'), to: at('2026-03-14T09:00:00Z') };

export async function seedDigestScenario(store: Store): Promise<{ evals: Record<string, number>; questions: Record<string, number> }> {
  // Runs: alive in the window or not, ended inside it or after it.
  await insertRun(store, { id: 'ks-run1', task: 'rmsnorm', owner: 'U0ALICE', createdAt: at('2026-03-12T10:00:00Z'), status: 'running', bestSpeedup: 1.5, bestSpeedupVsPeer: 0.875 });
  await insertRun(store, { id: 'ks-run2', task: 'rmsnorm', owner: 'U0BOB', createdAt: at('2026-03-13T12:00:00Z'), status: 'finished', finishedAt: at('2026-03-13T20:00:00Z'), endReason: 'target reached', bestSpeedup: 1.5, bestSpeedupVsPeer: 0.9 });
  await insertRun(store, { id: 'ks-run3', task: 'flash_attn_fwd', owner: 'U0ALICE', createdAt: at('2026-03-13T10:00:00Z'), status: 'stopped', finishedAt: at('2026-03-14T08:00:00Z'), endReason: 'stopped by U0ALICE', bestSpeedup: 1.125, bestSpeedupVsPeer: 0.5, slackChannel: 'C0KERNELS', slackThreadTs: '1773392400.000100' });
  // Failed after the window closed: still active at its end.
  await insertRun(store, { id: 'ks-run4', task: 'cpu_softmax', arch: 'cpu', owner: 'U0BOB', origin: 'terminal', createdAt: at('2026-03-14T08:30:00Z'), status: 'failed', finishedAt: at('2026-03-14T10:00:00Z'), bestSpeedup: 2 });
  await insertRun(store, { id: 'ks-run5', task: 'rmsnorm', createdAt: at('2026-03-10T10:00:00Z'), status: 'finished', finishedAt: at('2026-03-11T10:00:00Z'), bestSpeedup: 3 });
  await insertRun(store, { id: 'ks-run6', task: 'rmsnorm', createdAt: at('2026-03-14T09:30:00Z'), status: 'queued' });
  // Ended exactly when the window opens: inside it.
  await insertRun(store, { id: 'ks-run7', task: 'rmsnorm', arch: 'sm_100', createdAt: at('2026-03-12T08:00:00Z'), status: 'failed', finishedAt: at('2026-03-13T09:00:00Z'), endReason: 'budget' });

  const evals: Record<string, number> = {};
  // Before the window: the previous best of rmsnorm/sm_90 (the quick one does not count).
  evals.e0 = await insertEvaluation(store, { runId: 'ks-run1', seq: 1, task: 'rmsnorm', status: 'ok', correct: true, speedupVsBaseline: 1.25, speedupVsBestPeer: 0.75, harnessSeconds: 12, finishedAt: at('2026-03-12T12:00:00Z') });
  evals.e0b = await insertEvaluation(store, { runId: 'ks-run1', seq: 2, task: 'rmsnorm', scenarios: 'quick', status: 'ok', correct: true, speedupVsBaseline: 1.1, harnessSeconds: 3, finishedAt: at('2026-03-12T13:00:00Z') });
  evals.r5 = await insertEvaluation(store, { runId: 'ks-run5', seq: 1, task: 'rmsnorm', arch: 'sm_80', status: 'ok', correct: true, speedupVsBaseline: 3, harnessSeconds: 9, finishedAt: at('2026-03-10T12:00:00Z') });
  // In the window.
  evals.e1 = await insertEvaluation(store, { runId: 'ks-run1', seq: 3, task: 'rmsnorm', status: 'ok', correct: true, speedupVsBaseline: 1.5, speedupVsBestPeer: 0.875, peer: 'torch_compile', harnessSeconds: 30, finishedAt: at('2026-03-13T10:00:00Z') });
  evals.e2 = await insertEvaluation(store, { runId: 'ks-run1', seq: 4, task: 'rmsnorm', status: 'incorrect', correct: false, harnessSeconds: 20, finishedAt: at('2026-03-13T11:00:00Z') });
  evals.e3 = await insertEvaluation(store, { runId: 'ks-run2', seq: 1, task: 'rmsnorm', status: 'ok', correct: true, speedupVsBaseline: 1.5, speedupVsBestPeer: 0.9, peer: 'torch_compile', harnessSeconds: 10, finishedAt: at('2026-03-13T13:00:00Z') });
  evals.e4 = await insertEvaluation(store, { runId: 'ks-run2', seq: 2, task: 'rmsnorm', status: 'compile_error', correct: false, harnessSeconds: 2.5, finishedAt: at('2026-03-13T14:00:00Z') });
  evals.e5 = await insertEvaluation(store, { runId: 'ks-run3', seq: 1, task: 'flash_attn_fwd', status: 'ok', correct: true, speedupVsBaseline: 1.125, speedupVsBestPeer: 0.5, peer: 'cudnn', harnessSeconds: 40, finishedAt: at('2026-03-13T11:30:00Z') });
  evals.e6 = await insertEvaluation(store, { runId: 'ks-run3', seq: 2, task: 'flash_attn_fwd', scenarios: 'quick', status: 'ok', correct: true, speedupVsBaseline: 2, speedupVsBestPeer: 0.9, peer: 'cudnn', harnessSeconds: 5, finishedAt: at('2026-03-13T12:30:00Z') });
  evals.e7 = await insertEvaluation(store, { runId: 'ks-run3', seq: 3, task: 'flash_attn_fwd', status: 'rejected', correct: true, speedupVsBaseline: 3, harnessSeconds: 40, finishedAt: at('2026-03-13T15:00:00Z') });
  evals.e8 = await insertEvaluation(store, { runId: 'ks-run4', seq: 1, task: 'cpu_softmax', arch: 'cpu', status: 'ok', correct: true, speedupVsBaseline: 2, harnessSeconds: 4, finishedAt: at('2026-03-14T08:45:00Z') });
  evals.e9 = await insertEvaluation(store, { task: 'flash_attn_fwd', status: 'ok', correct: true, speedupVsBaseline: 5, speedupVsBestPeer: 2, peer: 'cudnn', harnessSeconds: 8, finishedAt: at('2026-03-13T16:00:00Z') });
  // After the window, and never finished.
  evals.e10 = await insertEvaluation(store, { runId: 'ks-run1', seq: 5, task: 'rmsnorm', status: 'ok', correct: true, speedupVsBaseline: 4, harnessSeconds: 11, finishedAt: at('2026-03-14T09:00:00Z') });
  evals.e11 = await insertEvaluation(store, { runId: 'ks-run1', seq: 6, task: 'rmsnorm', status: 'pending' });

  // Model calls.
  await insertStep(store, { runId: 'ks-run1', createdAt: at('2026-03-12T09:00:00Z'), costUsd: 5, inputTokens: 9999, outputTokens: 999 });
  await insertStep(store, { runId: 'ks-run1', createdAt: at('2026-03-13T09:30:00Z'), costUsd: 0.25, inputTokens: 1000, outputTokens: 200 });
  await insertStep(store, { runId: 'ks-run2', createdAt: at('2026-03-13T12:10:00Z'), costUsd: 0.5, inputTokens: 2000, outputTokens: 300 });
  await insertStep(store, { runId: 'ks-run2', createdAt: at('2026-03-13T12:20:00Z'), costUsd: 0.125, inputTokens: 500, outputTokens: 100 });
  await insertStep(store, { runId: 'ks-run3', createdAt: at('2026-03-14T08:59:59Z'), costUsd: 1, inputTokens: 4000, outputTokens: 800 });
  await insertStep(store, { runId: 'ks-run4', createdAt: at('2026-03-14T09:00:00Z'), costUsd: 2, inputTokens: 1, outputTokens: 1 });
  await insertStep(store, { runId: 'ks-run7', createdAt: at('2026-03-13T09:00:00Z'), costUsd: 0.0625, inputTokens: 100, outputTokens: 10 });

  const questions: Record<string, number> = {};
  // Asked the day before, its gain was reached inside the window (by e1).
  questions.q1 = await insertQuestion(store, { runId: 'ks-run1', source: 'human', author: 'U0CAROL', text: 'What fraction of peak bandwidth does the best kernel reach?', createdAt: at('2026-03-12T11:00:00Z'), evalSeqAtAsk: 1, bestBefore: 1.25, bestAfter: 1.5, gain: 1.2, evalsAfter: 5 });
  // Attribution still open: a provisional gain of 1.5.
  questions.q2 = await insertQuestion(store, { runId: 'ks-run2', source: 'bank', bankId: 'layer-memory', text: 'Which layer of the memory hierarchy is the kernel waiting on?', createdAt: at('2026-03-13T12:30:00Z'), evalSeqAtAsk: 0, bestBefore: 1, bestAfter: 1.5, evalsAfter: 2 });
  questions.q4 = await insertQuestion(store, { runId: 'ks-run3', source: 'bank', bankId: 'limit-claimed', text: 'Which measurement shows that limit is real?', createdAt: at('2026-03-13T11:00:00Z'), evalSeqAtAsk: 0, bestBefore: 1, bestAfter: 1.125, gain: 1.125, evalsAfter: 3 });
  // No gain followed.
  questions.q3 = await insertQuestion(store, { runId: 'ks-run3', source: 'human', author: 'U0DAVE', createdAt: at('2026-03-13T12:00:00Z'), evalSeqAtAsk: 2, bestBefore: 1.125, bestAfter: 1.125, gain: 1, evalsAfter: 1 });
  // Not attributed yet.
  questions.q5 = await insertQuestion(store, { runId: 'ks-run1', source: 'human', author: 'U0CAROL', createdAt: at('2026-03-13T10:30:00Z'), evalSeqAtAsk: 3 });
  questions.q7 = await insertQuestion(store, { runId: 'ks-run2', source: 'human', author: 'U0CAROL', createdAt: at('2026-03-13T21:00:00Z'), evalSeqAtAsk: 2 });
  // On the window's end: the next digest's.
  questions.q6 = await insertQuestion(store, { runId: 'ks-run4', source: 'human', author: 'U0ERIN', createdAt: at('2026-03-14T09:00:00Z'), evalSeqAtAsk: 1 });
  // A large gain, long ago: not this digest's.
  questions.q8 = await insertQuestion(store, { runId: 'ks-run5', source: 'bank', bankId: 'layer-memory', createdAt: at('2026-03-10T11:00:00Z'), evalSeqAtAsk: 0, bestBefore: 1, bestAfter: 3, gain: 3, evalsAfter: 1 });
  return { evals, questions };
}
