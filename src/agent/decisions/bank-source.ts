import type { Store } from '../../db/index.js';
import { collectBankStats, computeEvidence, loadBank, selectQuestion } from '../../questions/index.js';
import type { QuestionSource } from './question-source.js';

/**
 * The question bank as the engine's question source: the shipped YAML plus promoted entries (reloaded
 * at each decision point, so a question promoted a minute ago can be asked), evidence measured from
 * the run's evaluations, and the bank's selection policy (trigger fit, recency, attributed gains).
 */
export function createBankQuestionSource(options: { store: Store; dir?: string }): QuestionSource {
  return {
    async pick({ trigger, target, evaluations, askedInRun, seed }) {
      const bank = await loadBank({ store: options.store, ...(options.dir ? { dir: options.dir } : {}) });
      const evidence = computeEvidence(evaluations, { target });
      const stats = await collectBankStats(options.store);
      const selection = selectQuestion({ entries: bank.entries, trigger, evidence, askedInRun, stats, seed });
      if (!selection) return null;
      return { bankId: selection.entry.id, text: selection.text, evidence: selection.evidence as Record<string, unknown> };
    },
  };
}
