/**
 * A scripted 200-step run through the whole engine (real SDK, fake Messages API with a model of the
 * prompt cache, embedded database, real tools) that prints:
 *   - the share of input tokens sent behind cache breakpoints (read from or written to the cache;
 *     goal ≥ 85%), and the share actually read from it;
 *   - the largest request against the configured context budget (compaction keeps it under);
 *   - what the run cost at list price, and what it would have cost without caching.
 * Tokens are the fake server's estimate (4 characters per token), the same for every request, so the
 * shares are meaningful; absolute counts are not the real tokenizer's.
 *
 *   npx tsx bench/agent-cache.bench.ts [steps]     (npm run bench runs it with 200)
 */
import { setTimeout as delay } from 'node:timers/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLocalAgent } from '../src/agent/index.js';
import { costOf, readUsage } from '../src/agent/model/pricing.js';
import { silentLogger } from '../src/core/logger.js';
import { createStore, openDatabase } from '../src/db/index.js';
import { startFakeAnthropic, type RecordedRequest, type Reply } from '../test/support/anthropic/server.js';
import { testConfig } from '../test/agent/test-config.js';

const STEPS = Number(process.argv[2] ?? 200);
const MODEL = 'claude-sonnet-4-6';

/** The model's side of the run: mostly tool calls with outputs of a few kilobytes, now and then a claim. */
function script(req: RecordedRequest): Reply {
  const step = req.index + 1;
  if (step % 40 === 0) return { content: [{ type: 'text', text: `Step ${step}: I believe this is now bandwidth-bound and cannot be made faster.` }], stopReason: 'end_turn' };
  const lines = 60 + ((step * 37) % 120);
  if (step % 5 === 0) {
    return { content: [{ type: 'text', text: `Step ${step}: rewriting the kernel.` }, { type: 'tool_use', name: 'str_replace_based_edit_tool', input: { command: 'create', path: `notes/step-${step}.md`, file_text: `# Attempt ${step}\n${'- an idea about the loop order and the memory traffic\n'.repeat(20)}` } }] };
  }
  return {
    content: [
      { type: 'text', text: `Step ${step}: measuring.` },
      { type: 'tool_use', name: 'bash', input: { command: `for i in $(seq 1 ${lines}); do echo "step ${step} sample $i: time=0.$((RANDOM % 900 + 100)) ms, bytes=$((i * 4096))"; done` } },
    ],
  };
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'ks-bench-cache-'));
const server = await startFakeAnthropic({ fallback: script });
const config = testConfig(dir, server.url, { KERNELSEEK_MODEL: MODEL });
const handle = await openDatabase({ kind: 'memory' });
await handle.migrate();
const store = createStore(handle.db);
const agent = createLocalAgent({ config, store, logger: silentLogger, dispatcherEnv: { PATH: process.env.PATH } });
const { engine } = agent;
const started = performance.now();
const run = await engine.startRun({ task: 'cpu_softmax', owner: 'bench', origin: 'api', autonomous: true, budgets: { steps: STEPS, usd: 1000 } });
for (;;) {
  const r = await store.runs.get(run.id);
  if (r && ['finished', 'stopped', 'failed'].includes(r.status)) {
    if (r.status !== 'finished') throw new Error(`the run ${r.status}: ${r.error}`);
    break;
  }
  await delay(200);
}
const seconds = (performance.now() - started) / 1000;

let total = 0;
let read = 0;
let written = 0;
let largestServer = 0;
for (const r of server.requests) {
  if (!r.usage) continue;
  total += r.usage.total;
  read += r.usage.cache_read_input_tokens;
  written += r.usage.cache_creation_input_tokens;
  largestServer = Math.max(largestServer, r.usage.total);
}
const steps = await store.transcript.steps(run.id);
const budget = config.agent.contextBudgetTokens;
const largestEstimate = Math.max(...steps.map((s) => Number((s.request as { estimated_tokens?: number }).estimated_tokens ?? 0)));
const compactions = new Set(steps.map((s) => (s.request as { compacted_through_seq?: number | null }).compacted_through_seq ?? null).filter((v) => v !== null)).size;
const final = (await store.runs.get(run.id))!;
const uncached = costOf(MODEL, readUsage({ input_tokens: total, output_tokens: final.outputTokens })).costUsd;
const questions = await store.questions.forRun(run.id);

const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`;
console.log(`scripted run: ${steps.length} model steps, ${server.requests.length} requests, ${questions.length} bank questions, ${compactions} compaction(s), ${seconds.toFixed(0)} s`);
console.log(`input tokens (fake server's estimate): ${total} in all; ${read} read from the cache, ${written} written to it, ${total - read - written} uncached`);
console.log(`share of input tokens sent behind cache breakpoints: ${pct(read + written, total)} (goal ≥ 85%)`);
console.log(`share of input tokens read from the cache:           ${pct(read, total)}`);
console.log(`largest request: ${largestEstimate} tokens by the engine's estimate = ${pct(largestEstimate, budget)} of the context budget (${budget}); ${largestServer} by the server's count`);
console.log(`cost at ${MODEL} list prices: $${final.costUsd.toFixed(2)} with caching, $${uncached.toFixed(2)} if nothing were cached`);

await agent.close();
await server.close();
await handle.close();
await rm(dir, { recursive: true, force: true });

