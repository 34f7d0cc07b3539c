import { createHmac, randomBytes } from 'node:crypto';

/**
 * Requests into Bolt's HTTP receiver, signed the way Slack signs them: `X-Slack-Signature` =
 * `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{raw body}` under the signing secret.
 */

export const TEST_SIGNING_SECRET = 'test-signing-secret-0123456789abcdef';
export const TEST_TEAM = 'T0KSTEST1';

export function signSlackRequest(secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
  const signature = createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex');
  return { 'x-slack-signature': `v0=${signature}`, 'x-slack-request-timestamp': String(timestamp) };
}

export interface SentRequest {
  status: number;
  text: string;
  /** Milliseconds from sending the request to the whole response having arrived. */
  ms: number;
  /** Exactly what was sent, so a test can send it again (a replay). */
  request: { body: string; headers: Record<string, string> };
}

export interface SlashCommandFields {
  text: string;
  user: string;
  channel: string;
  /** Where Bolt's `respond` posts (point it at the fake Slack's responseUrl). */
  responseUrl: string;
  command?: string;
}

export interface EventOptions {
  eventId?: string;
  retryNum?: number;
  retryReason?: string;
}

export interface BlockActionFields {
  actionId: string;
  value: string;
  user: string;
  channel: string;
  messageTs: string;
  threadTs?: string;
  responseUrl: string;
  /** The blocks of the message the button is on (Slack sends them with the click). */
  messageBlocks?: unknown[];
}

export interface SlackSender {
  command(fields: SlashCommandFields, options?: { secret?: string; timestamp?: number }): Promise<SentRequest>;
  /** `eventId: null` sends an event without an id (Slack's older payloads, and a forger's). */
  event(event: Record<string, unknown>, options?: Omit<EventOptions, 'eventId'> & { eventId?: string | null; secret?: string; timestamp?: number }): Promise<SentRequest & { eventId: string | undefined }>;
  action(fields: BlockActionFields, options?: { secret?: string; timestamp?: number }): Promise<SentRequest>;
  /** A modal's submit button: `values` maps block id → action id → the element's state. */
  viewSubmission(fields: { user: string; callbackId: string; privateMetadata: string; values: Record<string, Record<string, unknown>>; viewId?: string }): Promise<SentRequest>;
  /** Posts a body as-is with the given headers (forged or missing signatures). */
  raw(body: string, headers: Record<string, string>): Promise<SentRequest>;
}

export function createSlackSender(endpoint: string, signingSecret = TEST_SIGNING_SECRET): SlackSender {
  async function post(body: string, contentType: string, headers: Record<string, string>): Promise<SentRequest> {
    const t0 = performance.now();
    const sent = { 'content-type': contentType, ...headers };
    const res = await fetch(endpoint, { method: 'POST', body, headers: sent });
    const text = await res.text();
    return { status: res.status, text, ms: performance.now() - t0, request: { body, headers: sent } };
  }
  const signed = (body: string, secret: string, timestamp?: number) => signSlackRequest(secret, body, timestamp);

  return {
    async command(fields, options = {}) {
      const body = new URLSearchParams({
        token: 'legacy-verification-token',
        team_id: TEST_TEAM,
        team_domain: 'kernelseek-test',
        channel_id: fields.channel,
        channel_name: 'kernels',
        user_id: fields.user,
        user_name: `user-${fields.user.toLowerCase()}`,
        command: fields.command ?? '/kernelseek',
        text: fields.text,
        api_app_id: 'A0KSAPP01',
        is_enterprise_install: 'false',
        response_url: fields.responseUrl,
        trigger_id: `${Date.now()}.${randomBytes(4).toString('hex')}`,
      }).toString();
      return post(body, 'application/x-www-form-urlencoded', signed(body, options.secret ?? signingSecret, options.timestamp));
    },
    async event(event, options = {}) {
      const eventId = options.eventId === null ? undefined : (options.eventId ?? `Ev${randomBytes(6).toString('hex').toUpperCase()}`);
      const body = JSON.stringify({
        token: 'legacy-verification-token',
        team_id: TEST_TEAM,
        api_app_id: 'A0KSAPP01',
        type: 'event_callback',
        ...(eventId ? { event_id: eventId } : {}),
        event_time: Math.floor(Date.now() / 1000),
        event,
        authorizations: [{ team_id: TEST_TEAM, user_id: 'UKSBOT001', is_bot: true, is_enterprise_install: false }],
      });
      const headers = signed(body, options.secret ?? signingSecret, options.timestamp);
      if (options.retryNum !== undefined) {
        headers['x-slack-retry-num'] = String(options.retryNum);
        headers['x-slack-retry-reason'] = options.retryReason ?? 'http_timeout';
      }
      return { ...(await post(body, 'application/json', headers)), eventId };
    },
    async action(fields, options = {}) {
      const payload = {
        type: 'block_actions',
        team: { id: TEST_TEAM, domain: 'kernelseek-test' },
        user: { id: fields.user, username: `user-${fields.user.toLowerCase()}`, team_id: TEST_TEAM },
        api_app_id: 'A0KSAPP01',
        token: 'legacy-verification-token',
        trigger_id: `${Date.now()}.${randomBytes(4).toString('hex')}`,
        container: { type: 'message', message_ts: fields.messageTs, channel_id: fields.channel, is_ephemeral: false, thread_ts: fields.threadTs },
        channel: { id: fields.channel, name: 'kernels' },
        message: { type: 'message', ts: fields.messageTs, thread_ts: fields.threadTs, text: '', ...(fields.messageBlocks ? { blocks: fields.messageBlocks } : {}) },
        response_url: fields.responseUrl,
        actions: [{ type: 'button', action_id: fields.actionId, block_id: 'b', value: fields.value, action_ts: String(Date.now() / 1000) }],
      };
      const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      return post(body, 'application/x-www-form-urlencoded', signed(body, options.secret ?? signingSecret, options.timestamp));
    },
    async viewSubmission(fields) {
      const payload = {
        type: 'view_submission',
        team: { id: TEST_TEAM, domain: 'kernelseek-test' },
        user: { id: fields.user, username: `user-${fields.user.toLowerCase()}`, team_id: TEST_TEAM },
        api_app_id: 'A0KSAPP01',
        token: 'legacy-verification-token',
        trigger_id: `${Date.now()}.${randomBytes(4).toString('hex')}`,
        view: {
          id: fields.viewId ?? 'V0KSVIEW1',
          type: 'modal',
          callback_id: fields.callbackId,
          private_metadata: fields.privateMetadata,
          state: { values: fields.values },
          hash: 'h',
          team_id: TEST_TEAM,
          app_id: 'A0KSAPP01',
        },
        response_urls: [],
      };
      const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      return post(body, 'application/x-www-form-urlencoded', signed(body, signingSecret));
    },
    raw: (body, headers) => post(body, headers['content-type'] ?? 'application/json', headers),
  };
}

let replyCounter = 0;

/**
 * A thread reply as Slack's `message` event carries it. Its default ts is now, as Slack's is (the
 * time the message was stored, to the microsecond), so it orders after the messages posted before it.
 */
export function threadReply(fields: { channel: string; threadTs: string; user: string; text: string; ts?: string }): Record<string, unknown> {
  replyCounter = (replyCounter + 1) % 500;
  const micros = Date.now() * 1000 + 500 + replyCounter;
  const ts = fields.ts ?? `${Math.floor(micros / 1e6)}.${String(micros % 1e6).padStart(6, '0')}`;
  return { type: 'message', channel: fields.channel, channel_type: 'channel', user: fields.user, text: fields.text, ts, thread_ts: fields.threadTs, event_ts: ts };
}
