import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'vitest';
import { createLocalAgent, type AgentEngine, type LocalAgent, type RunReporter, type RunView } from '../../src/agent/index.js';
import type { Config, Env } from '../../src/config/index.js';
import { LOCAL_TEST_AGENT, testConfig } from './test-config.js';

export { testConfig };
import { silentLogger } from '../../src/core/logger.js';
import type { Store } from '../../src/db/index.js';
import type { Dispatcher } from '../../src/queue/dispatcher.js';
import { startFakeAnthropic, type FakeAnthropic, type FakeAnthropicOptions, type RecordedRequest } from '../support/anthropic/server.js';

export interface ReporterEvent {
  event: keyof RunReporter;
  data: Record<string, unknown> & { run: RunView };
}

/** A reporter that records every event, in order. */
/** A reporter that records every event; `hold(event)` (when given) is awaited before it returns. */
export function recordingReporter(events: ReporterEvent[], hold?: (event: keyof RunReporter) => Promise<void> | void): RunReporter {
  const record = (event: keyof RunReporter) => (data: unknown) => {
    events.push({ event, data: data as ReporterEvent['data'] });
    return hold?.(event);
  };
  return {
    statusChanged: record('statusChanged'),
    stepFinished: record('stepFinished'),
    toolStarted: record('toolStarted'),
    evaluationProgress: record('evaluationProgress'),
    evaluationFinished: record('evaluationFinished'),
    newBest: record('newBest'),
    decisionPoint: record('decisionPoint'),
    questionAsked: record('questionAsked'),
    error: record('error'),
    runFinished: record('runFinished'),
  };
}

export interface EngineHarness {
  server: FakeAnthropic;
  config: Config;
  engine: AgentEngine;
  scheduler: LocalAgent['scheduler'];
  dispatcher: Dispatcher;
  events: ReporterEvent[];
  close(): Promise<void>;
}

/** An engine in this process: the real SDK against a fake server, the real harness, the bank. */
export async function startEngine(options: {
  store: Store;
  dataDir: string;
  server?: FakeAnthropicOptions;
  env?: Env;
  bankDir?: string;
  hold?: (event: keyof RunReporter) => Promise<void> | void;
}): Promise<EngineHarness> {
  const server = await startFakeAnthropic(options.server ?? {});
  const config = testConfig(options.dataDir, server.url, options.env);
  const events: ReporterEvent[] = [];
  const agent = createLocalAgent({ config, store: options.store, logger: silentLogger, ...LOCAL_TEST_AGENT, reporter: recordingReporter(events, options.hold), ...(options.bankDir ? { bankDir: options.bankDir } : {}) });
  return {
    server,
    config,
    engine: agent.engine,
    scheduler: agent.scheduler,
    dispatcher: agent.dispatcher,
    events,
    async close() {
      await agent.close();
      await server.close();
    },
  };
}

/** Waits until `check` holds (polling the store), or fails with what was last seen. */
export async function waitFor<T>(what: string, probe: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await probe();
  while (!check(last)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last seen: ${JSON.stringify(last, null, 1)?.slice(0, 2000)}`);
    await delay(50);
    last = await probe();
  }
  return last;
}

type Block = Record<string, unknown> & { type: string };

function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (k !== 'cache_control' && k !== 'citations') out[k] = plain(v);
    return out;
  }
  return value;
}

/** The content of the fake server's reply to `request`, as the next request should carry it back. */
function replyContent(request: RecordedRequest): Block[] | null {
  const reply = request.reply;
  if (!reply || 'error' in reply) return null;
  return reply.content.map((b) => (b.type === 'text' ? { type: 'text', text: b.text } : { type: 'tool_use', name: b.name, input: b.input })) as Block[];
}

/**
 * The model's view is consistent across the whole run: every successful request is the previous
 * successful one plus exactly the answer it got (and what followed it), so no step was repeated or
 * lost, and every tool call was answered exactly once. Failed requests (429/529) are ignored.
 */
export function expectConsistentConversation(requests: RecordedRequest[]): void {
  const ok = requests.filter((r) => r.reply && !('error' in r.reply));
  for (let i = 0; i + 1 < ok.length; i++) {
    let before = plain(ok[i]!.body.messages) as { role: string; content: Block[] }[];
    let after = plain(ok[i + 1]!.body.messages) as { role: string; content: Block[] }[];
    if (before.at(-1)?.role === 'assistant') {
      // A pause_turn continuation: the answer extends the assistant message the request ended with.
      const open = before.at(-1)!;
      const extended = after[before.length - 1]!;
      expect(extended.content.slice(0, open.content.length)).toEqual(open.content);
      after = [...after.slice(0, before.length - 1), { role: 'assistant', content: extended.content.slice(open.content.length) }, ...after.slice(before.length)];
      before = before.slice(0, -1);
    }
    // The prefix is unchanged...
    expect(after.slice(0, before.length), `request ${ok[i + 1]!.index} rewrote the conversation`).toEqual(before);
    // ...followed by the model's answer to request i, carried back exactly once.
    const answer = after[before.length];
    expect(answer?.role, `request ${ok[i + 1]!.index} lacks the answer to request ${ok[i]!.index}`).toBe('assistant');
    const expected = replyContent(ok[i]!)!;
    const got = answer!.content.map((b) => (b.type === 'tool_use' ? { type: 'tool_use', name: b.name, input: b.input } : b));
    const cutOff = ok[i]!.reply && 'stopReason' in ok[i]!.reply! && (ok[i]!.reply as { stopReason?: string }).stopReason === 'max_tokens';
    if (!cutOff) expect(got).toEqual(expected);
    // Each tool call of that answer has exactly one result in what follows.
    const uses = answer!.content.filter((b) => b.type === 'tool_use').map((b) => b.id);
    const results = after.slice(before.length + 1).flatMap((m) => m.content.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id));
    expect(results).toEqual(uses);
  }
}
