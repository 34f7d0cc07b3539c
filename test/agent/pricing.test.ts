import { describe, expect, it } from 'vitest';
import { costOf, FALLBACK_PRICE, priceOf, readUsage } from '../../src/agent/model/pricing.js';

describe('pricing', () => {
  it('prices each family from its table row, dated ids included', () => {
    expect(priceOf('claude-sonnet-4-5-20250929').price.family).toBe('sonnet');
    expect(priceOf('claude-sonnet-4-6').price.family).toBe('sonnet');
    expect(priceOf('claude-opus-4-5').price.family).toBe('opus-4.5+');
    expect(priceOf('claude-opus-4-1-20250805').price.family).toBe('opus');
    expect(priceOf('claude-opus-4-20250514').price.family).toBe('opus');
    expect(priceOf('claude-haiku-4-5').price.family).toBe('haiku-4.5');
    expect(priceOf('claude-3-5-haiku-latest').price.family).toBe('haiku-3.5');
  });

  it('prices an unknown model as the most expensive family and says so', () => {
    const { price, known } = priceOf('some-new-model');
    expect(known).toBe(false);
    expect(price).toBe(FALLBACK_PRICE);
    expect(price.output).toBe(Math.max(...['sonnet', 'opus', 'haiku'].map((m) => priceOf(`claude-${m}`).price.output)));
  });

  it('computes a step cost from input, output, cache writes (5m and 1h) and cache reads', () => {
    const usage = readUsage({
      input_tokens: 1000,
      output_tokens: 2000,
      cache_read_input_tokens: 10_000,
      cache_creation_input_tokens: 3000,
      cache_creation: { ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 1000 },
    });
    // sonnet: $3 in, $15 out, 5m write 3.75, 1h write 6, read 0.30 per million
    const expected = (1000 * 3 + 2000 * 15 + 10_000 * 0.3 + 2000 * 3.75 + 1000 * 6) / 1e6;
    expect(costOf('claude-sonnet-4-5', usage).costUsd).toBeCloseTo(expected, 12);
  });

  it('counts cache writes without a TTL breakdown as 5-minute writes', () => {
    expect(readUsage({ input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 500 })).toMatchObject({ cacheWrite5mTokens: 500, cacheWrite1hTokens: 0 });
  });
});
