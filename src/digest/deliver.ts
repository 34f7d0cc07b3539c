import { z } from 'zod';
import type { Store } from '../db/index.js';
import { createDigestDeliveryRepository } from '../db/repositories/digest-delivery.js';
import { AppError, describeError, NonRetryableError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { attributeGains } from '../questions/index.js';
import { renderDigestBlocks, digestHeadline } from './blocks.js';
import { digestChartPoints, digestChartRules, type GoalOf } from './chart-data.js';
import { renderSpeedupChart, type SpeedupChartOptions } from './charts.js';
import { computeDigest } from './compute.js';
import { DigestFiguresSchema, type DigestFigures } from './figures.js';
import type { DigestPoster } from './poster.js';
import { scheduledWindow, sinceOf, windowSince, type DigestWindowName } from './window.js';

/** What posting a digest needs. */
export interface DigestDeps {
  store: Store;
  poster: DigestPoster;
  /** The zone of DIGEST_TZ: the day key, and the times shown. */
  timeZone: string;
  logger?: Logger;
  chart?: Pick<SpeedupChartOptions, 'width' | 'height' | 'scale' | 'fontFiles' | 'fontDirs'>;
  now?: () => Date;
  /** How much time a digest covers (DIGEST_WINDOW); default a day. */
  window?: DigestWindowName;
  /** Each task's goal, for the chart's goal lines (none without it); read when a chart is drawn. */
  goals?: () => Promise<GoalOf>;
}

export type ChartState = 'pending' | 'posted' | 'none';

export interface PostedDigest {
  channel: string;
  messageTs: string;
  figures: DigestFigures;
  /** `none`: nothing to draw (no counted candidate in the window). `failed`: the message went out without it. */
  chart: 'posted' | 'none' | 'failed';
  chartError?: string;
}

/** What the digests row stores: who claimed it, the figures it posts, and whether the chart went out. */
export const StoredDigestSchema = z.object({
  claimedBy: z.string(),
  timeZone: z.string(),
  chart: z.enum(['pending', 'posted', 'none']),
  figures: DigestFiguresSchema,
});
export type StoredDigest = z.infer<typeof StoredDigestSchema>;

export type DeliveryResult =
  | { status: 'posted'; day: string; messageTs: string; chart: 'posted' | 'none' }
  /** Another claimant (replica, scheduler) owns this channel's digest for the day. */
  | { status: 'already_sent' | 'claimed_elsewhere'; day: string };

async function postChart(deps: DigestDeps, channel: string, figures: DigestFigures, title: string): Promise<'posted' | 'none'> {
  const points = digestChartPoints(figures);
  if (points.length === 0) return 'none';
  const png = await renderSpeedupChart(points, { x: 'time', timeZone: deps.timeZone, title: 'Best speedup vs baseline, per task', rules: digestChartRules(figures, await deps.goals?.().catch(() => undefined)), ...deps.chart });
  const stamp = figures.window.to.slice(0, 16).replace(/[-:T]/g, '');
  await deps.poster.uploadFile(channel, png, `kernelseek-digest-${stamp}.png`, {
    title,
    altText: `Best speedup over the baseline per task, ${figures.tasks.filter((t) => t.best).length} task(s), over the digest's window`,
  });
  return 'posted';
}

/**
 * The figures of a window after bringing gain attribution up to date, so "the questions that preceded
 * the largest gains" include gains reached since the engine last attributed.
 */
export async function computeCurrentDigest(store: Store, window: { from: Date; to: Date }): Promise<DigestFigures> {
  await attributeGains(store);
  return computeDigest(store, window);
}

/**
 * Posts a digest of the last `since` (default 24 h) to `channel` now: what `/kernelseek digest` and
 * `kernelseek digest --post` do. Not tied to the daily claim: asking twice posts twice. A chart that
 * cannot be uploaded does not hold back the message; the result says so.
 */
export async function postDigestNow(deps: DigestDeps, request: { channel: string; since?: string }): Promise<PostedDigest> {
  const window = windowSince(request.since ?? sinceOf(deps.window ?? 'day'), (deps.now ?? (() => new Date()))());
  const figures = await computeCurrentDigest(deps.store, window);
  const title = 'KernelSeek digest';
  const options = { timeZone: deps.timeZone, title };
  const { ts } = await deps.poster.postMessage(request.channel, renderDigestBlocks(figures, options), digestHeadline(figures, options));
  try {
    const chart = await postChart(deps, request.channel, figures, title);
    return { channel: request.channel, messageTs: ts, figures, chart };
  } catch (error) {
    (deps.logger ?? silentLogger).warn({ err: error, channel: request.channel }, 'digest chart not posted');
    return { channel: request.channel, messageTs: ts, figures, chart: 'failed', chartError: describeError(error) };
  }
}

/**
 * The scheduled digest of `channel` for the moment `scheduledAt`: covers the 24 h before it, and is
 * posted once per channel per day (in the digest's zone) whoever calls. The first caller claims the
 * (channel, day) row with the figures it will post; only that claimant (`owner`, the queue job id,
 * the same across its retries) posts, resuming where a failed attempt stopped: message, then chart.
 */
export async function deliverScheduledDigest(
  deps: DigestDeps,
  request: { channel: string; scheduledAt: Date; owner: string },
): Promise<DeliveryResult> {
  const { store } = deps;
  const log = deps.logger ?? silentLogger;
  const { from, to, day } = scheduledWindow(request.scheduledAt, deps.timeZone, deps.window);
  let row = await store.digests.find(request.channel, day);
  if (!row) {
    const figures = await computeCurrentDigest(store, { from, to });
    const payload: StoredDigest = { claimedBy: request.owner, timeZone: deps.timeZone, chart: 'pending', figures };
    row = (await store.digests.claim({ channel: request.channel, day, windowStart: from, windowEnd: to, payload })) ?? (await store.digests.find(request.channel, day));
    if (!row) throw new AppError('digest_claim_lost', `digest ${request.channel}/${day}: claim neither inserted nor found`);
  }
  const parsed = StoredDigestSchema.safeParse(row.payload);
  if (!parsed.success) {
    throw new NonRetryableError('digest_payload_invalid', `digest ${request.channel}/${day} has a payload this version cannot read: ${parsed.error.message}`);
  }
  const stored = parsed.data;
  if (stored.claimedBy !== request.owner) {
    log.info({ channel: request.channel, day, claimedBy: stored.claimedBy }, 'digest already claimed');
    return { status: row.sentAt ? 'already_sent' : 'claimed_elsewhere', day };
  }
  const title = `KernelSeek ${deps.window === 'week' ? 'weekly' : 'daily'} digest · ${day}`;
  let messageTs = row.messageTs;
  if (!row.sentAt || !messageTs) {
    const options = { timeZone: stored.timeZone, title };
    const posted = await deps.poster.postMessage(request.channel, renderDigestBlocks(stored.figures, options), digestHeadline(stored.figures, options));
    messageTs = posted.ts;
    await store.digests.markSent(row.id, messageTs);
  }
  let chart = stored.chart;
  if (chart === 'pending') {
    chart = await postChart({ ...deps, timeZone: stored.timeZone }, request.channel, stored.figures, title);
    await createDigestDeliveryRepository(store.db).patchPayload(row.id, { chart });
  }
  log.info({ channel: request.channel, day, messageTs, chart }, 'digest posted');
  return { status: 'posted', day, messageTs, chart };
}
