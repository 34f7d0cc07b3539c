import { DigestFiguresSchema, type DigestFigures, type DigestQuestion, type DigestRun, type DigestTask } from '../../src/digest/index.js';

/** Digest figures built in memory, for the renderings (no database needed). */
export const FROM = '2026-03-13T09:00:00.000Z';
export const TO = '2026-03-14T09:00:00.000Z';

export function makeTask(i: number, over: Partial<DigestTask> = {}): DigestTask {
  return {
    task: `task_${i}`,
    arch: 'sm_90',
    runs: 1,
    evaluations: 3,
    correct: 2,
    best: { speedupVsBaseline: 1 + i / 100, speedupVsPeer: 0.5, peer: 'cudnn', runId: `ks-run${i}`, evaluationId: i, seq: 2, at: '2026-03-13T12:00:00.000Z' },
    previousBest: null,
    progress: [{ at: '2026-03-13T12:00:00.000Z', speedup: 1 + i / 100 }],
    harnessSeconds: 60,
    costUsd: 0.5,
    ...over,
  };
}

export function makeRun(i: number, over: Partial<DigestRun> = {}): DigestRun {
  return {
    id: `ks-run${i}`,
    task: `task_${i}`,
    arch: 'sm_90',
    owner: 'U0ALICE',
    state: 'active',
    status: 'running',
    endReason: null,
    startedInWindow: true,
    bestSpeedup: 1.2,
    bestSpeedupVsPeer: 0.6,
    evaluations: 3,
    costUsd: 0.5,
    slackChannel: null,
    slackThreadTs: null,
    ...over,
  };
}

export function makeQuestion(i: number, over: Partial<DigestQuestion> = {}): DigestQuestion {
  return {
    questionId: i,
    runId: `ks-run${i}`,
    task: `task_${i}`,
    source: 'human',
    author: 'U0CAROL',
    bankId: null,
    text: 'What limits this kernel now?',
    bestBefore: 1,
    bestAfter: 1.5,
    gain: 1.5,
    final: true,
    askedAt: '2026-03-13T10:00:00.000Z',
    realizedAt: '2026-03-13T11:00:00.000Z',
    ...over,
  };
}

export function makeFigures(parts: { tasks?: DigestTask[]; runs?: DigestRun[]; top?: DigestQuestion[] } = {}): DigestFigures {
  const runs = parts.runs ?? [makeRun(1)];
  return DigestFiguresSchema.parse({
    window: { from: FROM, to: TO },
    runs: { started: runs.length, active: runs.length, finished: 0, stopped: 0, failed: 0, list: runs },
    tasks: parts.tasks ?? [makeTask(1)],
    evaluations: { total: 3, correct: 2, quick: 0, byStatus: { ok: 2, incorrect: 1 }, adHoc: 0, harnessSeconds: 60, gpuSeconds: 60 },
    model: { costUsd: 0.5, steps: 4, inputTokens: 1000, outputTokens: 100 },
    questions: { human: 1, bank: 0, people: 1, top: parts.top ?? [makeQuestion(1)] },
  });
}

export function makeQuietFigures(): DigestFigures {
  return DigestFiguresSchema.parse({
    window: { from: FROM, to: TO },
    runs: { started: 0, active: 0, finished: 0, stopped: 0, failed: 0, list: [] },
    tasks: [],
    evaluations: { total: 0, correct: 0, quick: 0, byStatus: {}, adHoc: 0, harnessSeconds: 0, gpuSeconds: 0 },
    model: { costUsd: 0, steps: 0, inputTokens: 0, outputTokens: 0 },
    questions: { human: 0, bank: 0, people: 0, top: [] },
  });
}
