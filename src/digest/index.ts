export { computeDigest } from './compute.js';
export * from './figures.js';
export * from './charts.js';
export * from './chart-data.js';
export * from './window.js';
