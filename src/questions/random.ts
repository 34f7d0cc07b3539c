/**
 * A small seeded generator: selection must give the same question for the same run state and seed
 * (tests, replays), so Math.random is never used.
 */

/** 32-bit FNV-1a of a string: spreads similar seeds (`run-1`, `run-2`) apart. */
function hashSeed(seed: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < seed.length; i += 1) {
    h ^= seed.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A generator of floats in [0, 1) determined entirely by `seed` (mulberry32). */
export function createRandom(seed: string | number): () => number {
  let state = hashSeed(String(seed));
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
