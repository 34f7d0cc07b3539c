import { describe, expect, it } from 'vitest';
import { endTurn, userTexts } from '../support/anthropic/script.js';
import { useServiceFixture } from '../support/fixture.js';
import { TEST_TEAM, threadReply } from '../support/slack/signed-requests.js';
import { startSlackStack, type SlackStack } from '../support/slack/slack-stack.js';

// Socket Mode (SLACK_APP_TOKEN set): no inbound HTTP for Slack; the app opens a WebSocket to the URL
// apps.connections.open gives it (the fake's), acks envelopes over it, and still serves /healthz.
const fx = useServiceFixture<SlackStack>('pglite', 'ks-slack-socket-');

const CHANNEL = 'CKERNELS1';

function commandPayload(text: string, responseUrl: string) {
  return { token: 'x', team_id: TEST_TEAM, channel_id: CHANNEL, channel_name: 'kernels', user_id: 'UALICE001', user_name: 'alice', command: '/kernelseek', text, api_app_id: 'A0KSAPP01', response_url: responseUrl, trigger_id: '1.2' };
}

describe('Socket Mode', () => {
  it('takes a slash command and a thread reply over the socket, acking each, and serves /healthz', async () => {
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir, env: { SLACK_APP_TOKEN: 'xapp-1-test-token' }, anthropic: { fallback: () => endTurn('Done.') } });
    const { fake } = fx.service;
    expect(fx.service!.app.mode).toBe('socket');
    await fake.socket.waitForConnection();
    expect(fake.callsOf('apps.connections.open')[0]!.token).toBe('xapp-1-test-token');
    expect((await fetch(`http://127.0.0.1:${fx.service!.app.port}/healthz`)).status).toBe(200);

    const help = await fake.socket.send('slash_commands', commandPayload('help', fake.responseUrl('help')));
    expect(help.ackMs).toBeLessThan(3000);
    await fake.waitFor((f) => f.responses.some((r) => r.id === 'help'), 5000, 'the help reply');

    await fake.socket.send('slash_commands', commandPayload('start cpu_softmax', fake.responseUrl('start')));
    await fake.waitFor((f) => f.messages.some((m) => JSON.stringify(m.blocks ?? []).includes('ks_ask_bank')), 20_000, 'the decision card');
    const root = fake.messages[0]!;
    const reply = threadReply({ channel: CHANNEL, threadTs: root.ts, user: 'UBOB00001', text: 'Where does the time go?' });
    fake.userPosted({ channel: CHANNEL, ts: String(reply.ts), threadTs: root.ts, user: 'UBOB00001', text: 'Where does the time go?' });
    const event = await fake.socket.send('events_api', { token: 'x', team_id: TEST_TEAM, api_app_id: 'A0KSAPP01', type: 'event_callback', event_id: 'EvSOCKET1', event_time: 1, event: reply });
    expect(event.ackMs).toBeLessThan(3000);
    await fake.waitFor(() => fx.service!.anthropic.requests.some((r) => userTexts(r).join('\n').includes('Where does the time go?')), 10_000, 'the question to reach the model');
  }, 60_000);
});
