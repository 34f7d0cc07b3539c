import type { BankEntry, Trigger } from './bank-schema.js';
import { formatEvidence, isEvidenceName, type Evidence, type EvidenceValue } from './evidence.js';
import { createRandom } from './random.js';
import type { BankStat } from './stats.js';

/**
 * How much an unproven question's uncertainty counts against a proven one's record. Rewards are
 * ln(gain), so a question that usually brings 1.2x scores about 0.18; with this weight a question
 * asked a handful of times out of a hundred still gets a comparable bonus.
 */
export const DEFAULT_EXPLORATION = 0.2;

export interface SelectQuestionInput {
  /** The bank (shipped and promoted entries), e.g. `(await loadBank(...)).entries`. */
  entries: readonly BankEntry[];
  trigger: Trigger;
  /** The run's measured evidence (`computeEvidence`); fills placeholders. */
  evidence: Evidence;
  /** Bank ids already asked in this run, oldest first (repeats allowed). */
  askedInRun: readonly string[];
  /** Past asks and attributed gains per bank id, over every run (`collectBankStats`). */
  stats: ReadonlyMap<string, BankStat>;
  /** Ties (e.g. between never-asked entries) are broken by a generator seeded with this. */
  seed: string | number;
  exploration?: number;
}

export interface Selection {
  entry: BankEntry;
  /** The question with its placeholders filled. */
  text: string;
  /** The evidence the text states, raw (store it with the question). */
  evidence: Evidence;
  /** Why it was chosen: its upper confidence bound, the mean reward behind it, and its past asks. */
  score: { ucb: number; meanReward: number; asks: number; askedInRunBefore: boolean };
  /** How many entries fitted the trigger and had evidence for every placeholder. */
  candidates: number;
}

/** The question text with every placeholder replaced by its measured value. */
export function fillText(entry: Pick<BankEntry, 'text'>, evidence: Evidence): string {
  return entry.text.replace(/\{([^{}]*)\}/g, (whole, raw: string) => {
    const name = raw.trim();
    const value = isEvidenceName(name) ? evidence[name] : undefined;
    if (value === undefined) throw new Error(`no evidence for {${name}}`);
    return formatEvidence(name as Parameters<typeof formatEvidence>[0], value);
  });
}

function hasEvidence(entry: BankEntry, evidence: Evidence): boolean {
  return entry.placeholders.every((p) => isEvidenceName(p) && evidence[p] !== undefined && !(Array.isArray(evidence[p]) && (evidence[p] as string[]).length === 0));
}

interface Scored {
  entry: BankEntry;
  ucb: number;
  meanReward: number;
  asks: number;
  tie: number;
}

/**
 * Upper confidence bounds over attributed gains (UCB1, reward = ln(gain)). A never-asked entry has an
 * infinite bound, so every fitting entry is tried before any is preferred on its record; asks whose
 * gain is not attributed yet count at the mean reward of the whole bank.
 */
function scoreEntries(pool: BankEntry[], stats: ReadonlyMap<string, BankStat>, exploration: number, random: () => number): Scored[] {
  let totalAsks = 0;
  let rewardSum = 0;
  let attributedSum = 0;
  for (const s of stats.values()) {
    totalAsks += s.asks;
    if (s.attributed > 0 && s.meanGain !== null) {
      rewardSum += s.attributed * Math.log(s.meanGain);
      attributedSum += s.attributed;
    }
  }
  const prior = attributedSum > 0 ? rewardSum / attributedSum : 0;
  // Sorting by id first makes the draw independent of the order the bank was loaded in.
  return [...pool]
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((entry) => {
      const s = stats.get(entry.id);
      const asks = s?.asks ?? 0;
      const attributed = Math.min(s?.attributed ?? 0, asks);
      const own = attributed > 0 && s?.meanGain ? attributed * Math.log(s.meanGain) : 0;
      const meanReward = asks > 0 ? (own + (asks - attributed) * prior) / asks : prior;
      const ucb = asks > 0 ? meanReward + exploration * Math.sqrt(Math.log(1 + totalAsks) / asks) : Number.POSITIVE_INFINITY;
      return { entry, ucb, meanReward, asks, tie: random() };
    });
}

/**
 * Picks the bank question to ask at a decision point: one that fits the trigger and has evidence for
 * its placeholders; among those, one not yet asked in this run (when every one has been, the one
 * asked longest ago); among those, the highest upper confidence bound on past gain. Deterministic for
 * the same input and seed. Returns undefined when no entry fits.
 */
export function selectQuestion(input: SelectQuestionInput): Selection | undefined {
  const fitting = input.entries.filter((e) => e.triggers.includes(input.trigger) && hasEvidence(e, input.evidence));
  if (fitting.length === 0) return undefined;

  const lastAsked = new Map<string, number>();
  input.askedInRun.forEach((id, i) => lastAsked.set(id, i));
  const fresh = fitting.filter((e) => !lastAsked.has(e.id));
  let pool = fresh;
  if (pool.length === 0) {
    const oldest = Math.min(...fitting.map((e) => lastAsked.get(e.id)!));
    pool = fitting.filter((e) => lastAsked.get(e.id) === oldest);
  }

  const random = createRandom(input.seed);
  const scored = scoreEntries(pool, input.stats, input.exploration ?? DEFAULT_EXPLORATION, random);
  scored.sort((a, b) => (b.ucb === a.ucb ? a.tie - b.tie : b.ucb - a.ucb));
  const best = scored[0]!;
  const used: Evidence = {};
  for (const p of best.entry.placeholders) {
    if (isEvidenceName(p)) used[p] = input.evidence[p] as EvidenceValue;
  }
  return {
    entry: best.entry,
    text: fillText(best.entry, input.evidence),
    evidence: used,
    score: { ucb: best.ucb, meanReward: best.meanReward, asks: best.asks, askedInRunBefore: fresh.length === 0 },
    candidates: fitting.length,
  };
}
