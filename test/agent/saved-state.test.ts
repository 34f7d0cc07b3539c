import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/index.js';
import { tables } from '../../src/db/index.js';
import { BACKENDS } from '../support/db.js';
import { useServiceFixture } from '../support/fixture.js';
import { endTurn, toolResultTexts } from '../support/anthropic/script.js';
import { CORRECT } from './fixtures/kernels.js';
import { startEngine, waitFor, type EngineHarness } from './helpers.js';

// Saved run state from an earlier engine version must still resume (openai-agents-js keeps such
// fixtures). saved-run-v1.json: a run whose worker died after one of three tool calls finished,
// during the second; its workspace is not on this host.
interface Fixture {
  run: Record<string, unknown> & { id: string; state: Record<string, unknown> };
  messages: { seq: number; role: 'user' | 'assistant'; content: unknown[] }[];
  toolCalls: { stepSeq: number; toolUseId: string; name: string; input: unknown; result: unknown; isError: boolean; finished: boolean }[];
  steps: { seq: number; model: string; request: Record<string, unknown>; stopReason: string; costUsd: number }[];
  evaluations: Record<string, unknown>[];
}

async function loadFixture(store: Store, name: string): Promise<Fixture> {
  const fixture = JSON.parse(await readFile(path.join(import.meta.dirname, 'fixtures', name), 'utf8')) as Fixture;
  const db = store.db;
  await db.insert(tables.runs).values({ ...(fixture.run as typeof tables.runs.$inferInsert), startedAt: new Date() });
  for (const m of fixture.messages) await store.transcript.appendMessage(fixture.run.id, m.seq, m.role, m.content);
  for (const s of fixture.steps) await store.transcript.recordStep({ runId: fixture.run.id, ...s });
  for (const c of fixture.toolCalls) {
    await store.transcript.startToolCall({ runId: fixture.run.id, stepSeq: c.stepSeq, toolUseId: c.toolUseId, name: c.name, input: c.input });
    if (c.finished) await store.transcript.finishToolCall(fixture.run.id, c.toolUseId, c.result, c.isError, 10);
  }
  for (const e of fixture.evaluations) await db.insert(tables.evaluations).values({ runId: fixture.run.id, ...(e as typeof tables.evaluations.$inferInsert) });
  return fixture;
}

for (const backend of BACKENDS) {
  describe(`saved state v1 (${backend})`, () => {
    const fx = useServiceFixture<EngineHarness>(backend, 'ks-fixture-');

    it('resumes: stored results reused, the interrupted command answered once, the rest executed', { timeout: 180_000 }, async () => {
      const fixture = await loadFixture(fx.db.store, 'saved-run-v1.json');
      const h = (fx.service = await startEngine({
        store: fx.db.store,
        dataDir: fx.dataDir,
        server: {
          script: [
            (req) => {
              // The stored conversation, unchanged, then the three results in order.
              expect(req.body.messages.slice(0, 3).map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
              const [view, bash, evaluation] = toolResultTexts(req);
              expect(view).toBe('     1\t// stored view result');
              expect(bash).toMatch(/interrupted .* before its result was recorded/);
              expect(evaluation).toMatch(/^Evaluation #2 \(quick scenarios\): ok; correct on 3\/3/);
              return endTurn('done');
            },
          ],
        },
      }));
      await h.engine.resumeLiveRuns();
      const done = await waitFor('the run to end', () => fx.db.store.runs.get(fixture.run.id), (r) => r?.status === 'finished', 150_000);
      expect(done).toMatchObject({ endReason: 'budget_steps', evalsUsed: 2, stepsUsed: 3 });
      // The workspace was restored from the last evaluated candidate, and the bash command did not run again.
      const workspace = path.join(fx.dataDir, 'workspaces', fixture.run.id);
      expect(await readFile(path.join(workspace, 'kernel.cpp'), 'utf8')).toBe(CORRECT);
      await expect(readFile(path.join(workspace, 'NOTES.md'), 'utf8')).rejects.toThrow();
      const calls = await fx.db.store.transcript.toolCalls(fixture.run.id);
      expect(calls.map((c) => [c.toolUseId, c.isError])).toEqual([
        ['toolu_fx_eval1', false],
        ['toolu_fx_view', false],
        ['toolu_fx_bash', true],
        ['toolu_fx_eval2', false],
      ]);
      expect((await fx.db.store.evaluations.forRun(fixture.run.id)).map((e) => e.seq)).toEqual([1, 2]);
    });
  });
}
