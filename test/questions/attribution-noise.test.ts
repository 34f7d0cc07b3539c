import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/index.js';
import { attributeGains } from '../../src/questions/index.js';
import { BACKENDS, useTestDatabase } from '../support/db.js';
import { newRunInput } from '../support/factories.js';

type Measured = { point: number; ci: [number, number]; verdict: 'faster' | 'slower' | 'same' };

// The attack: after a question, the model resubmits the best kernel with a comment changed; noise
// lifts its point figure. The bank must not learn that the question "gained" anything.
describe.each(BACKENDS)('gain attribution with the harness intervals on %s', (backend) => {
  const t = useTestDatabase(backend);
  let store: Store;
  beforeEach(() => {
    store = t.store;
  });

  async function run(outcomes: Measured[]): Promise<string> {
    const r = await store.runs.create(newRunInput({ task: 'fixture', owner: 'U1', origin: 'terminal', model: 'm', target: 2 }));
    await store.runs.transition(r.id, 'running');
    for (const [i, o] of outcomes.entries()) {
      const seq = i + 1;
      const row = await store.evaluations.createPending({ runId: r.id, seq, task: 'fixture', jobId: `${r.id}:${seq}`, candidateHash: `h${seq}`, source: '// k' });
      await store.evaluations.complete(row.id, {
        status: 'ok', correct: true, speedupVsBaseline: o.point, speedupVsBestPeer: null,
        result: { schema: 'kernelseek.eval/1', summary: { speedup_vs_baseline_geomean: o.point, speedup_vs_baseline_ci: o.ci, verdict_vs_baseline: o.verdict } },
        gpu: null, arch: null, worker: 'w', harnessSeconds: 1, startedAt: new Date(),
      });
    }
    return r.id;
  }

  async function askAfter(runId: string, evalSeqAtAsk: number): Promise<number> {
    const { question } = await store.questions.add({ runId, evalSeqAtAsk, externalId: `q${evalSeqAtAsk}`, source: 'bank', bankId: 'b1', text: 'Why?', author: 'bank' });
    await store.questions.claimPending(runId);
    return question.id;
  }

  it('a resubmission that noise lifts is no gain; a real improvement is', async () => {
    const first: Measured = { point: 1.3, ci: [1.25, 1.35], verdict: 'faster' };
    const runId = await run([first]);
    const q = await askAfter(runId, 1);
    const noise = await run([first, { point: 1.34, ci: [1.24, 1.41], verdict: 'faster' }, { point: 1.02, ci: [0.97, 1.06], verdict: 'same' }]);
    const qNoise = await askAfter(noise, 1);
    const real = await run([first, { point: 1.6, ci: [1.5, 1.7], verdict: 'faster' }, { point: 1.1, ci: [1.05, 1.15], verdict: 'faster' }]);
    const qReal = await askAfter(real, 1);
    await attributeGains(store, { k: 2 });
    expect((await store.questions.get(q))!.gain).toBeNull(); // no evaluation after it yet
    expect(await store.questions.get(qNoise)).toMatchObject({ bestBefore: 1.3, bestAfter: 1.3, gain: 1, evalsAfter: 2 });
    expect(await store.questions.get(qReal)).toMatchObject({ bestBefore: 1.3, bestAfter: 1.6, evalsAfter: 2 });
    expect((await store.questions.get(qReal))!.gain).toBeCloseTo(1.6 / 1.3, 12);
  });
});
