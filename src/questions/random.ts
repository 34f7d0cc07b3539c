import { createHash } from 'node:crypto';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plusFromState } from 'pure-rand/generator/xoroshiro128plus';

/**
 * A seeded generator: selection must give the same question for the same run state and seed
 * (tests, replays), so Math.random is never used. pure-rand's xoroshiro128+ does the generating;
 * its whole 128-bit state comes from a SHA-256 of the seed, so similar seeds (`run-1`, `run-2`)
 * start far apart.
 */
export function createRandom(seed: string | number): () => number {
  const digest = createHash('sha256').update(String(seed)).digest();
  const rng = xoroshiro128plusFromState([0, 4, 8, 12].map((offset) => digest.readInt32LE(offset)));
  return () => uniformFloat64(rng);
}
