import { NonRetryableError } from '../core/errors.js';
import type { NewQuestion, Store } from '../db/index.js';
import type { Trigger } from './bank-schema.js';
import { computeEvidence, isCorrect } from './evidence.js';
import type { Bank } from './load.js';
import { selectQuestion, type Selection } from './select.js';
import { collectBankStats } from './stats.js';

export interface BankPick {
  selection: Selection;
  /** The row to store (store.questions.add) when the question is delivered to the agent. */
  question: NewQuestion;
}

/**
 * Chooses the bank question for a run at a decision point, with everything selection needs read
 * from the store the same way every time: the run's evidence (with its target), the bank ids already
 * asked in it, the statistics of every run, and a seed made from the run and its count of bank
 * questions. Returns undefined when no entry fits. Stores nothing: the caller adds `question` when it
 * delivers it, so a question that is never delivered is never counted.
 */
export async function pickBankQuestion(store: Store, input: { runId: string; trigger: Trigger; bank: Pick<Bank, 'entries'>; seed?: string }): Promise<BankPick | undefined> {
  const [run, evaluations, asked, stats] = await Promise.all([
    store.runs.get(input.runId),
    store.evaluations.forRun(input.runId),
    store.questions.forRun(input.runId),
    collectBankStats(store),
  ]);
  if (!run) throw new NonRetryableError('run_unknown', `Run ${input.runId} does not exist.`);
  const askedInRun = asked.filter((q) => q.source === 'bank' && q.bankId && q.deliveredAt).map((q) => q.bankId!);
  const evidence = computeEvidence(evaluations, { target: run.target });
  const selection = selectQuestion({
    entries: input.bank.entries,
    trigger: input.trigger,
    evidence,
    askedInRun,
    stats,
    seed: input.seed ?? `${input.runId}:${askedInRun.length}`,
  });
  if (!selection) return undefined;

  const finished = evaluations.filter((e) => e.status !== 'pending' && e.seq != null);
  const evalSeqAtAsk = finished.reduce((max, e) => Math.max(max, e.seq!), 0);
  const bestBefore = finished.filter((e) => e.seq! <= evalSeqAtAsk && isCorrect(e)).reduce((best, e) => Math.max(best, e.speedupVsBaseline!), 1);
  return {
    selection,
    question: {
      runId: input.runId,
      source: 'bank',
      bankId: selection.entry.id,
      text: selection.text,
      author: 'bank',
      trigger: input.trigger,
      evidence: { ...evidence, stated: selection.evidence },
      evalSeqAtAsk,
      bestBefore,
    },
  };
}
