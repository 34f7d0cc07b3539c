import type { Usage } from './types.js';

/** US dollars per million tokens. Cache writes and reads are priced relative to input (ANCHORS.md). */
export interface ModelPrice {
  family: string;
  input: number;
  output: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
}

function price(family: string, input: number, output: number): ModelPrice {
  return { family, input, output, cacheWrite5m: input * 1.25, cacheWrite1h: input * 2, cacheRead: input * 0.1 };
}

/**
 * Published list prices per model family (platform.claude.com pricing page). Matched in order on the
 * model id, so dated ids (`claude-sonnet-4-5-20250929`) and aliases price the same.
 */
export const PRICE_TABLE: { match: RegExp; price: ModelPrice }[] = [
  { match: /opus-4-(?:[5-9]|\d{2})(?!\d{6})/, price: price('opus-4.5+', 5, 25) },
  { match: /opus/, price: price('opus', 15, 75) },
  { match: /sonnet/, price: price('sonnet', 3, 15) },
  { match: /haiku-4/, price: price('haiku-4.5', 1, 5) },
  { match: /3-5-haiku|haiku-3-5/, price: price('haiku-3.5', 0.8, 4) },
  { match: /haiku/, price: price('haiku-3', 0.25, 1.25) },
];

/** Unknown models are priced as the most expensive family, so a budget in dollars is never overrun. */
export const FALLBACK_PRICE: ModelPrice = PRICE_TABLE.reduce((max, row) => (row.price.output > max.output ? row.price : max), PRICE_TABLE[0]!.price);

export function priceOf(model: string): { price: ModelPrice; known: boolean } {
  const hit = PRICE_TABLE.find((row) => row.match.test(model.toLowerCase()));
  return hit ? { price: hit.price, known: true } : { price: FALLBACK_PRICE, known: false };
}

export interface StepUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWrite5mTokens: number;
  cacheWrite1hTokens: number;
}

/** Reads the API's usage block; cache writes without a TTL breakdown count as 5-minute writes. */
export function readUsage(usage: Partial<Usage> | null | undefined): StepUsage {
  const write = usage?.cache_creation_input_tokens ?? 0;
  const oneHour = usage?.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  const fiveMin = usage?.cache_creation?.ephemeral_5m_input_tokens ?? Math.max(0, write - oneHour);
  return {
    inputTokens: usage?.input_tokens ?? 0,
    outputTokens: usage?.output_tokens ?? 0,
    cacheReadTokens: usage?.cache_read_input_tokens ?? 0,
    cacheWrite5mTokens: fiveMin,
    cacheWrite1hTokens: oneHour,
  };
}

export function costOf(model: string, usage: StepUsage): { costUsd: number; family: string; known: boolean } {
  const { price: p, known } = priceOf(model);
  const usd =
    (usage.inputTokens * p.input +
      usage.outputTokens * p.output +
      usage.cacheReadTokens * p.cacheRead +
      usage.cacheWrite5mTokens * p.cacheWrite5m +
      usage.cacheWrite1hTokens * p.cacheWrite1h) /
    1_000_000;
  return { costUsd: usd, family: p.family, known };
}
