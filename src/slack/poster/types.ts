import type { KnownBlock } from '../views/block-kit.js';

/** What the poster sends, and what it answers. */

export interface MessagePayload {
  channel: string;
  threadTs?: string;
  /** Notification and fallback text; capped at Slack's limit, the rest uploaded as a file. */
  text: string;
  blocks?: KnownBlock[];
  /** Files posted in the same thread right after the message (full text of something cut short). */
  files?: { filename: string; content: string | Buffer; title?: string }[];
  /** Resolve once the message is posted, not after its files (a message whose ts is needed at once). */
  filesFollow?: boolean;
}

export interface UpdatePayload {
  channel: string;
  ts: string;
  text: string;
  blocks?: KnownBlock[];
}

export interface EphemeralPayload {
  channel: string;
  user: string;
  threadTs?: string;
  text: string;
  blocks?: KnownBlock[];
}

export interface FilePayload {
  channel: string;
  threadTs?: string;
  filename: string;
  content: string | Buffer;
  title?: string;
  initialComment?: string;
}

export interface ReactionPayload {
  channel: string;
  ts: string;
  name: string;
}

/** The thread's status line (`assistant.threads.setStatus`); an empty `status` clears it. */
export interface ThreadStatusPayload {
  channel: string;
  threadTs: string;
  status: string;
  /** Messages Slack rotates through while the status shows (at most 10). */
  loadingMessages?: string[];
}

/** `chat.unfurl`: Work Objects metadata, or plain unfurl blocks per URL. */
export interface UnfurlPayload {
  channel: string;
  ts: string;
  /** Block Kit per shared URL (the plain unfurl). */
  unfurls?: Record<string, { blocks: KnownBlock[] }>;
  /** Work Objects entities (`metadata.entities`), where the workspace supports them. */
  entities?: Record<string, unknown>[];
}

/** `views.publish`: a person's App Home tab. */
export interface HomePayload {
  user: string;
  view: { type: 'home'; blocks: KnownBlock[]; private_metadata?: string };
}

export type PostResult = { ok: true; ts?: string; fileId?: string } | { ok: false; error: string };

export interface PosterPacing {
  /** Between two messages (or uploads) in one channel: Slack allows about one per second. */
  messageIntervalMs: number;
  /** Between two chat.update calls in the workspace: Tier 3 is about 50 a minute. */
  updateIntervalMs: number;
  /** chat.postEphemeral is Tier 4 (about 100 a minute). */
  ephemeralIntervalMs: number;
  /** reactions.add is Tier 3. */
  reactionIntervalMs: number;
  /** assistant.threads.setStatus has limits of its own: paced like Tier 3, per workspace. */
  statusIntervalMs: number;
  /** chat.unfurl is Tier 3. */
  unfurlIntervalMs: number;
  /** views.publish is Tier 4. */
  viewIntervalMs: number;
}

export const SLACK_PACING: PosterPacing = {
  messageIntervalMs: 1000,
  updateIntervalMs: 1200,
  ephemeralIntervalMs: 600,
  reactionIntervalMs: 1200,
  statusIntervalMs: 1200,
  unfurlIntervalMs: 1200,
  viewIntervalMs: 600,
};

/** One Slack call the poster queues. */
export type Operation =
  | { kind: 'chat.postMessage'; payload: MessagePayload }
  | { kind: 'chat.update'; payload: UpdatePayload }
  | { kind: 'chat.postEphemeral'; payload: EphemeralPayload }
  | { kind: 'files.upload'; payload: FilePayload }
  | { kind: 'reactions.add'; payload: ReactionPayload }
  | { kind: 'assistant.threads.setStatus'; payload: ThreadStatusPayload }
  | { kind: 'chat.unfurl'; payload: UnfurlPayload }
  | { kind: 'views.publish'; payload: HomePayload & { channel?: undefined } };
