/**
 * The daily digest: figures from the store, Block Kit and terminal renderings, speedup charts, and
 * the scheduled job that posts one digest per channel per day (DESIGN §9, docs/digest.md).
 */
export { computeDigest } from './compute.js';
export * from './figures.js';
export * from './charts.js';
export * from './chart-data.js';
export * from './run-chart.js';
export * from './window.js';
export { renderDigestBlocks, digestHeadline, escapeMrkdwn, SLACK_LIMITS, SLACK_LIST_LIMITS, type DigestRenderOptions } from './blocks.js';
export { renderDigestText } from './text.js';
export { createSlackWebClient, createWebApiDigestPoster, classifySlackError, type DigestPoster } from './poster.js';
export {
  postDigestNow,
  computeCurrentDigest,
  deliverScheduledDigest,
  StoredDigestSchema,
  type StoredDigest,
  type DigestDeps,
  type PostedDigest,
  type DeliveryResult,
} from './deliver.js';
export {
  startDigestScheduler,
  scheduleDigests,
  processDigestJob,
  digestSchedulerId,
  ScheduledDigestJobSchema,
  DIGEST_QUEUE,
  DIGEST_JOB_NAME,
  DIGEST_JOB_OPTIONS,
  type DigestSchedulerHandle,
  type ScheduledDigestJob,
} from './scheduler.js';
