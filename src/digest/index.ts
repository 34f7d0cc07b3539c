export { computeDigest } from './compute.js';
export * from './figures.js';
export * from './charts.js';
export * from './chart-data.js';
export * from './window.js';
export { renderDigestBlocks, digestHeadline, escapeMrkdwn, SLACK_LIMITS, SLACK_LIST_LIMITS, type DigestRenderOptions } from './blocks.js';
export { renderDigestText } from './text.js';
