import type { Store } from '../db/index.js';
import { attributeGains, collectAskSummary, loadBank, promoteQuestion } from '../questions/index.js';
import type { BankPort } from './deps.js';

/** The question bank (src/questions) as the Slack listeners use it. */
export function createBankPort(store: Store, options: { dir?: string } = {}): BankPort {
  return {
    async list() {
      // Attribution is incremental and idempotent: the gains shown are current.
      await attributeGains(store);
      const bank = await loadBank({ store, ...(options.dir ? { dir: options.dir } : {}) });
      const { byBankId } = await collectAskSummary(store);
      return bank.entries.map((e) => {
        const s = byBankId.get(e.id);
        return { id: e.id, kind: e.kind, triggers: [...e.triggers], asks: s?.asks ?? 0, meanGain: s?.meanGain ?? null, lastUsed: s?.lastUsed?.toISOString() ?? null };
      });
    },
    async promote(questionId, input) {
      const entry = await promoteQuestion(store, questionId, { kind: input.kind, triggers: input.triggers, by: input.by, ...(options.dir ? { dir: options.dir } : {}) });
      return { id: entry.id };
    },
  };
}
