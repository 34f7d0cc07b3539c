export { computeDigest } from './compute.js';
