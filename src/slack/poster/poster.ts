import { setMaxListeners } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import type { webApi } from '@slack/bolt';
import type { Logger } from '../../core/logger.js';
import { guardSlackPayload } from '../../core/mrkdwn.js';
import { classifyCallError, type CallFailure } from './classify-error.js';
import { createLane, laneWaitMs, type Lane, type LanePolicy } from './lane.js';
import { capText, clip, SLACK_TEXT_LIMITS } from './limits.js';
import { sendOperation } from './send.js';
import {
  SLACK_PACING,
  type EphemeralPayload,
  type FilePayload,
  type HomePayload,
  type MessagePayload,
  type Operation,
  type PosterPacing,
  type PostResult,
  type ReactionPayload,
  type ThreadStatusPayload,
  type UnfurlPayload,
  type UpdatePayload,
} from './types.js';
import { scrubStrings } from './server-paths.js';
import type { KnownBlock } from '../views/block-kit.js';

/** Waits `ms`, or less when `signal` fires: a stop ends the wait, it is not an error. */
async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms > 0 && !signal.aborted) await delay(ms, undefined, { signal }).catch(() => undefined);
}

export * from './types.js';

type WebClient = webApi.WebClient;

/**
 * The one outbound path to Slack for the whole process: the Slack listeners, every run's reporter
 * and the digest post through it. It paces calls per Slack's limits, honours Retry-After, coalesces
 * pending status-card edits (only the latest state is sent), keeps each channel's messages in order,
 * retries a bounded number of times, and never throws: a failure is logged and returned as
 * `{ ok: false }`, so Slack being down never stops a run.
 */

export interface PosterOptions {
  client: WebClient;
  logger: Logger;
  pacing?: Partial<PosterPacing>;
  /** 429 answers tolerated per call before giving up (each waits Retry-After). */
  maxRateLimitRetries?: number;
  /** Network and 5xx failures tolerated per call (exponential backoff from `backoffMs`). */
  maxTransientRetries?: number;
  backoffMs?: number;
  now?: () => number;
  /**
   * Applied to every string of what goes into Slack (message text and blocks, status lines, unfurls,
   * App Home, the text files a long message overflows into): the last guard against a server path
   * reaching Slack (server-paths.ts). Kernel sources and charts uploaded with uploadFile are not touched.
   */
  scrub?: (text: string) => string;
}

export interface PosterStats {
  /** Operations sent to Slack (an upload counts once), by kind. */
  sent: Record<string, number>;
  rateLimited: number;
  retried: number;
  /** Status-card edits replaced by a newer one before being sent. */
  coalesced: number;
  failed: number;
}

export interface SlackPoster {
  postMessage(payload: MessagePayload): Promise<PostResult>;
  /** Edits a message. A pending edit of the same message is replaced: only the latest state is sent. */
  updateMessage(payload: UpdatePayload): Promise<PostResult>;
  postEphemeral(payload: EphemeralPayload): Promise<PostResult>;
  uploadFile(payload: FilePayload): Promise<PostResult>;
  addReaction(payload: ReactionPayload): Promise<PostResult>;
  /**
   * Sets (or, with an empty status, clears) a thread's status line. A pending status of the same
   * thread is replaced: only the latest is sent.
   */
  setThreadStatus(payload: ThreadStatusPayload): Promise<PostResult>;
  unfurl(payload: UnfurlPayload): Promise<PostResult>;
  /** Publishes a person's App Home; a pending publish for the same person is replaced. */
  publishHome(payload: HomePayload): Promise<PostResult>;
  /** Resolves when nothing is queued or in flight. */
  idle(): Promise<void>;
  stats(): PosterStats;
  /** Sends what is queued for up to `graceMs`, then drops the rest (logged). Later calls fail at once. */
  close(graceMs?: number): Promise<void>;
}

interface Job {
  op: Operation;
  coalesceKey: string | undefined;
  waiters: ((result: PostResult) => void)[];
  settled: boolean;
  rateLimited: number;
  transient: number;
  degraded: boolean;
}

/** Makes a payload small enough for Slack after it said `msg_too_long` / `invalid_blocks`: text only, capped. */
function degrade(op: Operation): boolean {
  if (op.kind !== 'chat.postMessage' && op.kind !== 'chat.update' && op.kind !== 'chat.postEphemeral') return false;
  const p = op.payload as { text: string; blocks?: KnownBlock[] };
  p.blocks = undefined;
  p.text = capText(p.text, SLACK_TEXT_LIMITS.sectionText).text;
  return true;
}

export function createSlackPoster(options: PosterOptions): SlackPoster {
  const { client, logger } = options;
  const pacing: PosterPacing = { ...SLACK_PACING, ...options.pacing };
  const maxRateLimitRetries = options.maxRateLimitRetries ?? 10;
  const maxTransientRetries = options.maxTransientRetries ?? 3;
  const backoffMs = options.backoffMs ?? 1000;
  const now = options.now ?? Date.now;
  // Server paths cut (scrub), then any broadcast mention a model or candidate slipped in escaped (core/mrkdwn.ts).
  const clean = <T>(value: T): T => guardSlackPayload(options.scrub ? scrubStrings(value, options.scrub) : value);

  const lanes = new Map<string, Lane<Job>>();
  const pendingEdits = new Map<string, Job>();
  const stop = new AbortController();
  // Every lane that waits for its pace listens to this one signal: a burst over many channels is
  // more than Node's default of 10 listeners, and no leak.
  setMaxListeners(0, stop.signal);
  const idleWaiters: (() => void)[] = [];
  let outstanding = 0;
  let closed = false;
  const stats: PosterStats = { sent: {}, rateLimited: 0, retried: 0, coalesced: 0, failed: 0 };

  function laneFor(op: Operation): Lane<Job> {
    let key: string;
    let policy: LanePolicy;
    switch (op.kind) {
      case 'chat.postMessage':
      case 'files.upload':
        // Uploads share the channel's lane so a summary and its attachment stay in order.
        key = `channel:${op.payload.channel}`;
        policy = { minIntervalMs: pacing.messageIntervalMs };
        break;
      case 'chat.update':
        key = 'update';
        policy = { minIntervalMs: pacing.updateIntervalMs };
        break;
      case 'chat.postEphemeral':
        key = 'ephemeral';
        policy = { minIntervalMs: pacing.ephemeralIntervalMs };
        break;
      case 'reactions.add':
        key = 'reactions';
        policy = { minIntervalMs: pacing.reactionIntervalMs };
        break;
      case 'assistant.threads.setStatus':
        key = 'status';
        policy = { minIntervalMs: pacing.statusIntervalMs };
        break;
      case 'chat.unfurl':
        key = 'unfurl';
        policy = { minIntervalMs: pacing.unfurlIntervalMs };
        break;
      case 'views.publish':
        key = 'views';
        policy = { minIntervalMs: pacing.viewIntervalMs };
        break;
    }
    let lane = lanes.get(key);
    if (!lane) {
      lane = createLane<Job>(key, policy);
      lanes.set(key, lane);
    }
    return lane;
  }

  function settle(job: Job, result: PostResult): void {
    if (job.settled) return;
    job.settled = true;
    for (const w of job.waiters) w(result);
    outstanding -= job.waiters.length;
    if (outstanding === 0) for (const w of idleWaiters.splice(0)) w();
  }

  /** Decides what happens to the job at the head of `lane` after a failed attempt. True: try again. */
  function shouldRetry(lane: Lane<Job>, job: Job, failure: CallFailure): boolean {
    const t = now();
    if (failure.kind === 'rate_limited') {
      stats.rateLimited += 1;
      lane.pausedUntil = Math.max(lane.pausedUntil, t + failure.retryAfterSeconds * 1000);
      job.rateLimited += 1;
      return job.rateLimited <= maxRateLimitRetries;
    }
    if (failure.kind === 'transient') {
      job.transient += 1;
      lane.pausedUntil = Math.max(lane.pausedUntil, t + backoffMs * 2 ** (job.transient - 1));
      return job.transient <= maxTransientRetries;
    }
    if (failure.kind === 'too_big' && !job.degraded) {
      job.degraded = degrade(job.op);
      return job.degraded;
    }
    return false;
  }

  async function pump(lane: Lane<Job>): Promise<void> {
    if (lane.running) return;
    lane.running = true;
    try {
      while (lane.queue.length > 0) {
        await pause(laneWaitMs(lane, now()), stop.signal);
        if (stop.signal.aborted) return;
        const job = lane.queue[0]!;
        // From here a newer edit of the same message queues behind this one instead of merging.
        if (job.coalesceKey && pendingEdits.get(job.coalesceKey) === job) pendingEdits.delete(job.coalesceKey);
        let result: PostResult;
        try {
          stats.sent[job.op.kind] = (stats.sent[job.op.kind] ?? 0) + 1;
          result = await sendOperation(client, job.op);
        } catch (error) {
          const failure = classifyCallError(error);
          lane.nextAt = now() + lane.policy.minIntervalMs;
          if (shouldRetry(lane, job, failure)) {
            stats.retried += 1;
            const newer = job.coalesceKey ? pendingEdits.get(job.coalesceKey) : undefined;
            if (newer) {
              // A newer state of this message is already queued: it supersedes the one that failed.
              lane.queue.shift();
              newer.waiters.push(...job.waiters);
              stats.coalesced += 1;
            } else if (job.coalesceKey) {
              pendingEdits.set(job.coalesceKey, job);
            }
            continue;
          }
          lane.queue.shift();
          stats.failed += 1;
          logger.warn({ method: job.op.kind, error: failure.error, channel: job.op.payload.channel }, 'Slack call failed; giving up on it');
          settle(job, { ok: false, error: failure.error });
          continue;
        }
        lane.nextAt = now() + lane.policy.minIntervalMs;
        lane.queue.shift();
        settle(job, result);
      }
    } finally {
      lane.running = false;
    }
  }

  function enqueue(op: Operation, coalesceKey?: string): Promise<PostResult> {
    if (closed) return Promise.resolve({ ok: false, error: 'poster_closed' });
    return new Promise<PostResult>((resolve) => {
      outstanding += 1;
      const existing = coalesceKey ? pendingEdits.get(coalesceKey) : undefined;
      if (existing) {
        existing.op = op;
        existing.degraded = false;
        existing.waiters.push(resolve);
        stats.coalesced += 1;
        return;
      }
      const job: Job = { op, coalesceKey, waiters: [resolve], settled: false, rateLimited: 0, transient: 0, degraded: false };
      if (coalesceKey) pendingEdits.set(coalesceKey, job);
      const lane = laneFor(op);
      lane.queue.push(job);
      void pump(lane);
    });
  }

  return {
    postMessage(raw) {
      const payload = { ...clean({ ...raw, files: undefined, filesFollow: undefined }), files: raw.files?.map((f) => (typeof f.content === 'string' ? clean(f) : { ...f, title: f.title && clean(f.title) })) };
      const capped = capText(payload.text, SLACK_TEXT_LIMITS.messageText);
      const files = [...(payload.files ?? [])];
      if (capped.overflow) files.push({ filename: 'message.txt', content: capped.overflow, title: 'Full message' });
      const posted = enqueue({ kind: 'chat.postMessage', payload: { ...payload, text: capped.text, files: undefined } });
      // Queued now, behind the message in the same lane, so the file lands right after it.
      const uploads = files.map((f) =>
        enqueue({ kind: 'files.upload', payload: { channel: payload.channel, ...(payload.threadTs ? { threadTs: payload.threadTs } : {}), ...f } }),
      );
      return uploads.length === 0 || raw.filesFollow ? posted : Promise.all([posted, ...uploads]).then(([first]) => first!);
    },
    updateMessage(raw) {
      const payload = clean(raw);
      const text = capText(payload.text, SLACK_TEXT_LIMITS.messageText).text;
      return enqueue({ kind: 'chat.update', payload: { ...payload, text } }, `${payload.channel}/${payload.ts}`);
    },
    postEphemeral(raw) {
      const payload = clean(raw);
      return enqueue({ kind: 'chat.postEphemeral', payload: { ...payload, text: capText(payload.text, SLACK_TEXT_LIMITS.messageText).text } });
    },
    // The file's content goes as it is (a kernel, a chart); its title and comment are guarded.
    uploadFile: (payload) => enqueue({ kind: 'files.upload', payload: guardSlackPayload(payload) }),
    addReaction: (payload) => enqueue({ kind: 'reactions.add', payload }),
    setThreadStatus(raw) {
      const payload = clean(raw);
      const loadingMessages = payload.loadingMessages?.slice(0, SLACK_TEXT_LIMITS.loadingMessages).map((m) => clip(m, SLACK_TEXT_LIMITS.statusText));
      return enqueue(
        { kind: 'assistant.threads.setStatus', payload: { ...payload, status: clip(payload.status, SLACK_TEXT_LIMITS.statusText), ...(loadingMessages ? { loadingMessages } : {}) } },
        `status:${payload.channel}/${payload.threadTs}`,
      );
    },
    unfurl: (payload) => enqueue({ kind: 'chat.unfurl', payload: clean(payload) }),
    publishHome: (payload) => enqueue({ kind: 'views.publish', payload: clean(payload) }, `home:${payload.user}`),
    idle() {
      if (outstanding === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    stats: () => ({ ...stats, sent: { ...stats.sent } }),
    async close(graceMs = 5000) {
      closed = true;
      if (outstanding > 0) {
        const grace = new AbortController();
        await Promise.race([this.idle(), pause(graceMs, grace.signal)]);
        grace.abort();
      }
      stop.abort();
      let dropped = 0;
      for (const lane of lanes.values()) {
        for (const job of lane.queue.splice(0)) {
          dropped += job.waiters.length;
          settle(job, { ok: false, error: 'poster_closed' });
        }
      }
      pendingEdits.clear();
      if (dropped > 0) logger.warn({ dropped }, 'Slack poster closed with calls still queued; they were dropped');
    },
  };
}
