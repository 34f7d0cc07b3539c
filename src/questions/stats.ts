import type { Store } from '../db/index.js';
import { createBankAttributionRepository, type AskRow } from '../db/repositories/bank-attribution.js';

/** What the bank knows about one entry from every run so far. */
export interface BankStat {
  /** Times it was delivered to an agent. */
  asks: number;
  /** Asks whose gain is final (see attributeGains). */
  attributed: number;
  /** Geometric mean of the final gains (1.0 = no improvement); null before any is final. */
  meanGain: number | null;
  lastUsed: Date | null;
}

/** The same figures for people's questions, which have no bank id. */
export interface AskSummary {
  asks: number;
  attributed: number;
  meanGain: number | null;
}

function accumulate(rows: readonly AskRow[]): BankStat {
  let attributed = 0;
  let logSum = 0;
  let lastUsed: Date | null = null;
  for (const r of rows) {
    if (r.gain !== null && r.gain > 0) {
      attributed += 1;
      logSum += Math.log(r.gain);
    }
    const at = r.deliveredAt ?? r.createdAt;
    if (!lastUsed || at > lastUsed) lastUsed = at;
  }
  return { asks: rows.length, attributed, meanGain: attributed > 0 ? Math.exp(logSum / attributed) : null, lastUsed };
}

/**
 * Per-bank-id statistics from asked questions. Gains are ratios, so they are averaged geometrically
 * (1.00x and 1.44x average to 1.20x), which is also what selection's ln(gain) reward assumes.
 */
export function summarizeAsks(rows: readonly AskRow[]): { byBankId: Map<string, BankStat>; people: AskSummary } {
  const groups = new Map<string, AskRow[]>();
  const people: AskRow[] = [];
  for (const r of rows) {
    if (r.bankId) {
      const list = groups.get(r.bankId) ?? [];
      list.push(r);
      groups.set(r.bankId, list);
    }
    else if (r.source === 'human') people.push(r);
  }
  const byBankId = new Map([...groups].map(([id, list]) => [id, accumulate(list)]));
  const { asks, attributed, meanGain } = accumulate(people);
  return { byBankId, people: { asks, attributed, meanGain } };
}

/** Statistics for every bank id ever asked (run `attributeGains` first for current gains). */
export async function collectBankStats(store: Store): Promise<Map<string, BankStat>> {
  return summarizeAsks(await createBankAttributionRepository(store.db).bankAsks()).byBankId;
}

/** Statistics for every bank id and for people's questions together. */
export async function collectAskSummary(store: Store): Promise<ReturnType<typeof summarizeAsks>> {
  return summarizeAsks(await createBankAttributionRepository(store.db).bankAsks());
}
