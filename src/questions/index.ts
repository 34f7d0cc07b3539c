/**
 * The question bank (DESIGN §7): what the agent asks itself at a decision point when no person does.
 *
 *   const bank = await loadBank({ store });                  // shipped YAML + promoted entries, once
 *   const pick = await pickBankQuestion(store, { runId, trigger: 'plateau', bank });
 *   if (pick) await store.questions.add(pick.question);      // then deliver pick.selection.text
 *   await attributeGains(store);                             // after evaluations finish
 *
 * pickBankQuestion reads the run's evidence, asked ids and the bank's statistics and calls the pure
 * selectQuestion, which tests and other callers can use directly.
 */
export { TRIGGERS, KINDS, type Trigger, type QuestionKind, type BankEntry } from './bank-schema.js';
export { EVIDENCE, EVIDENCE_NAMES, computeEvidence, formatEvidence, type Evidence, type EvidenceName, type EvaluationRecord } from './evidence.js';
export { lintBank, formatBankProblem, type BankLint, type BankProblem } from './lint.js';
export { loadBank, defaultBankDir, type Bank } from './load.js';
export { selectQuestion, fillText, DEFAULT_EXPLORATION, type SelectQuestionInput, type Selection } from './select.js';
export { attributeGains, attributeQuestion, DEFAULT_ATTRIBUTION_K, type Attribution, type AttributionReport } from './attribution.js';
export { collectBankStats, collectAskSummary, summarizeAsks, type BankStat, type AskSummary } from './stats.js';
export { promoteQuestion, type PromoteOptions } from './promote.js';
export { exportBankYaml } from './export.js';
export { pickBankQuestion, type BankPick } from './pick.js';
