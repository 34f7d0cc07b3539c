import { describe, expect, it } from 'vitest';
import type { Run } from '../../src/db/index.js';
import { renderStartingCard } from '../../src/slack/views/status-card.js';
import { endTurn, reply, text, toolUse } from '../support/anthropic/script.js';
import { useServiceFixture } from '../support/fixture.js';
import { FAST } from '../agent/fixtures/kernels.js';
import { waitFor } from '../agent/helpers.js';
import type { FakeSlack } from '../support/slack/fake-slack.js';
import { startSlackStack, type SlackStack } from '../support/slack/slack-stack.js';

// Issue 39, "Slack mentions pass through": text the model writes and a candidate prints reaches the
// team's channel (decision cards, errors, the status card, the final card, App Home, unfurls). None
// of their `<!channel>`, `<!here>`, `<!everyone>`, `<!subteam^…>`, `<@U…>` or `<url|label>` may
// become live, nor a bare user id of theirs a mention; KernelSeek's own mentions and links still work.
const fx = useServiceFixture<SlackStack>('pglite', 'ks-slack-escape-');

const CHANNEL = 'CKERNELS1';
const ALICE = 'UALICE001';
const PUBLIC = 'https://kernelseek.example.com';
const HOSTILE = '<!channel> <!here> <!everyone> <@UATTACK01> <!subteam^S0ATTACK1|@kernels> <http://evil.example/x|click here> & UATTACK02';

/** Live Slack syntax an attacker could have produced (any of it, anywhere in a payload). */
const LIVE = [/<!channel/, /<!here/, /<!everyone/, /<!subteam/, /<@UATTACK0[12]/, /<http:\/\/evil/];

/**
 * Correct and fast on the quick scenarios (FAST's code), and on any other shape it prints the hostile
 * text and aborts: the run's best, confirmed on the full set at the end, fails there with the
 * candidate's own output as the reason.
 */
const TRAP = `${FAST.replace('extern "C" ', 'static ').replace('softmax_rows(', 'fast_rows(')}
#include <cstdio>
#include <cstdlib>
extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  const bool quick = (rows == 64 && cols == 128) || (rows == 7 && cols == 33) || (rows == 256 && cols == 1024);
  if (!quick) {
    std::fprintf(stderr, "%s\\n", ${JSON.stringify(HOSTILE)});
    std::abort();
  }
  return fast_rows(x, y, rows, cols);
}
`;

/** Every string of every call the app made to Slack (and every response_url post). */
function everyString(fake: FakeSlack): string[] {
  const strings = (value: unknown): string[] => {
    if (typeof value === 'string') return [value];
    if (Array.isArray(value)) return value.flatMap(strings);
    if (value && typeof value === 'object') return Object.values(value).flatMap(strings);
    return [];
  };
  return [...fake.calls.filter((c) => c.method !== 'upload').flatMap((c) => strings(c.args)), ...fake.responses.flatMap((r) => strings(r.body))];
}

async function startIn(stack: SlackStack, options: { scenarios?: 'quick'; evals?: number }): Promise<Run> {
  const starting = renderStartingCard('cpu_softmax', ALICE);
  const root = await stack.poster.postMessage({ channel: CHANNEL, text: starting.text, blocks: starting.blocks });
  const view = await stack.engine.startRun({
    task: 'cpu_softmax',
    owner: ALICE,
    origin: 'slack',
    slack: { channel: CHANNEL, threadTs: root.ok ? root.ts! : '' },
    autonomous: true,
    ...(options.scenarios ? { scenarios: options.scenarios } : {}),
    ...(options.evals ? { budgets: { evals: options.evals } } : {}),
  });
  return (await fx.db.store.runs.get(view.id))!;
}

describe('text from the model and from candidates reaches Slack escaped', () => {
  it('a claim, a candidate crash, a refusal: every payload of the runs holds their mentions and links dead, and ours live', async () => {
    fx.service = await startSlackStack({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_ALLOWED_USERS: ALICE, KERNELSEEK_PUBLIC_URL: PUBLIC, KERNELSEEK_CONVERGE_STOPS: '20' },
      anthropic: {
        script: [
          // The model claims a limit in hostile words (a decision card quotes it)...
          endTurn(`It is memory-bound and cannot be made faster. ${HOSTILE}`),
          // ...then submits the trap: the best on the quick set, a crash with hostile output elsewhere.
          reply(text(HOSTILE), toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: TRAP }), toolUse('evaluate', {})),
          // The second run: the model refuses, explaining itself in hostile words.
          { content: [text(HOSTILE)], stopReason: 'refusal', stopDetails: { type: 'refusal', category: null, explanation: `I will not. ${HOSTILE}` } },
        ],
      },
    });
    const { fake, engine } = fx.service;

    const first = await startIn(fx.service, { scenarios: 'quick', evals: 1 });
    const ended = await waitFor('the first run to end', () => fx.db.store.runs.get(first.id), (r) => r?.status === 'finished' && Boolean((r.state as { confirmation?: unknown }).confirmation), 180_000);
    expect(ended!.endReason).toBe('budget_evals');
    expect(ended!.bestEvaluationId).not.toBeNull();
    const confirmation = (ended!.state as { confirmation?: { correct: boolean; reason: string | null } }).confirmation;
    expect(confirmation?.correct).toBe(false);
    expect(confirmation?.reason).toContain(HOSTILE);

    const second = await startIn(fx.service, {});
    const refused = await waitFor('the second run to stop', () => fx.db.store.runs.get(second.id), (r) => r?.status === 'stopped', 60_000);
    expect(refused!.endReason).toBe('model_refusal');
    expect(refused!.error).toContain(HOSTILE);

    // A person's own view of the runs: App Home, and a run link pasted in a channel (plain unfurl).
    await fx.service.sender.event({ type: 'app_home_opened', user: ALICE, channel: 'DALICE001', tab: 'home', event_ts: '1.3' });
    await fake.waitFor(() => fake.homes.has(ALICE), 15_000, 'the App Home');
    fake.fail('chat.unfurl', { error: 'feature_not_enabled', match: (a) => Boolean(a.metadata) });
    const url = `${PUBLIC}/runs/${second.id}`;
    await fx.service.sender.event({ type: 'link_shared', channel: CHANNEL, user: ALICE, message_ts: '1.000100', links: [{ domain: 'kernelseek.example.com', url }], event_ts: '1.000100' });
    await fake.waitFor(() => fake.unfurls.some((u) => u.kind === 'blocks'), 15_000, 'the plain unfurl');
    await fx.service.poster.idle();
    await fx.service.scheduler.idle(second.id);
    void engine;

    const seen = everyString(fake);
    // The hostile text arrived (the decision card, the error, the status card, the final cards)...
    const escaped = seen.filter((s) => s.includes('&lt;!channel&gt; &lt;!here&gt;'));
    expect(escaped.length).toBeGreaterThanOrEqual(4);
    // ...and nowhere live.
    for (const pattern of LIVE) expect(seen.filter((s) => pattern.test(s)), String(pattern)).toEqual([]);
    // KernelSeek's own mention and links are still Slack syntax.
    expect(seen.some((s) => s.includes(`<@${ALICE}>`))).toBe(true);
    const home = JSON.stringify(fake.homes.get(ALICE));
    expect(home).toMatch(new RegExp(`<https://kernelseek-test\\.slack\\.com/archives/${CHANNEL}/p\\d+\\|${second.id}>`));
    expect(JSON.stringify(fake.unfurls.find((u) => u.kind === 'blocks')!.payload)).toContain(`KernelSeek run <https://kernelseek-test.slack.com/archives/${CHANNEL}/p`);
  });
});
