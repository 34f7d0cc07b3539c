import { UserInputError } from '../core/errors.js';
import type { Evaluation, Run, Store } from '../db/index.js';
import { countedBest } from '../harness/counted-best.js';
import type { EvalResult } from '../harness/result.js';

/**
 * Which result of a run goes out, and whether it may be called verified. Only a counted result
 * leaves as verified (DESIGN §12): measured on the task's full scenario set, correct on every one of
 * them by the harness's verdict (status ok), and not flagged implausible. Anything else is exported
 * with its standing said plainly, and `pr` refuses it.
 */
export type Standing = 'verified' | 'subset' | 'incorrect' | 'implausible';

export interface ScenarioSet {
  /** What the evaluation asked for: `all`, `quick`, or a filter. */
  name: string;
  /** Scenarios the result holds. */
  evaluated: number;
  /** The task's scenarios today (null when the task could not be read). */
  total: number | null;
  /** Measured on every scenario of the task. */
  full: boolean;
}

export interface Judgement {
  standing: Standing;
  /** One sentence for people: why it is (not) verified. */
  reason: string;
  scenarioSet: ScenarioSet;
}

export interface ChosenEvaluation extends Judgement {
  run: Run;
  evaluation: Evaluation;
  /** The harness's result (`kernelseek.eval/1`). */
  result: EvalResult;
  /** How it was chosen, for the evidence: `best`, `best, on the full set` or `eval N`. */
  chosenAs: string;
}

export function resultOf(e: Pick<Evaluation, 'result'>): EvalResult | null {
  const r = e.result as (EvalResult & { schema?: string }) | null;
  return r && r.schema === 'kernelseek.eval/1' && Array.isArray(r.scenarios) && r.summary ? r : null;
}

/**
 * The standing of one evaluation against the task's full set (`totalScenarios`, when known).
 * Pure: the same evaluation is judged the same wherever it is shown.
 */
export function judgeEvaluation(e: Pick<Evaluation, 'status' | 'correct' | 'scenarios'>, result: EvalResult, totalScenarios: number | null): Judgement {
  const evaluated = result.scenarios.length;
  const full = e.scenarios === 'all' && (totalScenarios === null || evaluated === totalScenarios);
  const scenarioSet: ScenarioSet = { name: e.scenarios, evaluated, total: totalScenarios, full };
  const failing = result.scenarios.filter((s) => !s.correct || (typeof s.status === 'string' && s.status !== 'ok'));
  if (e.status !== 'ok' || e.correct !== true || result.status !== 'ok' || !result.correct || failing.length > 0 || result.summary.correct !== evaluated) {
    const first = failing[0];
    const why = first ? `; first failing ${first.id}${first.reason ? `: ${first.reason}` : ''}` : result.messages[0] ? `; ${result.messages[0]}` : '';
    return { standing: 'incorrect', scenarioSet, reason: `not correct: the harness says ${result.status}, ${result.summary.correct} of ${evaluated} scenarios correct${why}` };
  }
  const flags = Array.isArray(result.flags) ? (result.flags as unknown[]).map(String) : [];
  if (flags.includes('implausible')) {
    return { standing: 'implausible', scenarioSet, reason: 'flagged implausible by the harness (a speedup beyond the task\'s plausibility bound or the roofline): checked by a person before it is called verified' };
  }
  if (!full) {
    const of = totalScenarios === null ? '' : ` of the task's ${totalScenarios}`;
    const which = e.scenarios === 'quick' ? 'the quick subset' : e.scenarios === 'all' ? 'the scenarios the task had then' : `the scenarios matching ${e.scenarios}`;
    return { standing: 'subset', scenarioSet, reason: `measured only on ${which} (${evaluated}${of} scenarios): not verified` };
  }
  return { standing: 'verified', scenarioSet, reason: `correct on all ${evaluated} scenarios of the task (the full set), by the harness's verdict` };
}

/**
 * The evaluation of `runId` to export: `seq` when given, else the run's counted best
 * (src/harness/counted-best.ts, the function every surface shows the best from). A run with no
 * counted result (a quick run) exports its best on the subset, labelled so — or, when the same
 * candidate was evaluated on every scenario since, that evaluation. Throws a UserInputError (safe to
 * show) for an unknown run, an unknown or unfinished evaluation, or a run without a correct candidate.
 */
export async function chooseEvaluation(store: Store, runId: string, options: { seq?: number | undefined; totalScenarios: number | null }): Promise<ChosenEvaluation> {
  const run = await store.runs.get(runId);
  if (!run) throw new UserInputError(`There is no run '${runId}' in this database. \`kernelseek runs\` lists them.`, { code: 'run_unknown' });
  const evaluations = await store.evaluations.forRun(run.id);
  const pick = (evaluation: Evaluation, chosenAs: string): ChosenEvaluation => {
    const result = resultOf(evaluation);
    if (!result) {
      const why = evaluation.status === 'pending' ? 'it has not finished' : `it has no harness result (${evaluation.status})`;
      throw new UserInputError(`Evaluation #${evaluation.seq} of ${run.id} cannot be exported: ${why}.`, { code: 'evaluation_unusable' });
    }
    return { run, evaluation, result, chosenAs, ...judgeEvaluation(evaluation, result, options.totalScenarios) };
  };
  if (options.seq !== undefined) {
    const hit = evaluations.find((e) => e.seq === options.seq);
    if (!hit) {
      const seqs = evaluations.map((e) => e.seq).filter((s) => s !== null);
      throw new UserInputError(`Run ${run.id} has no evaluation #${options.seq}${seqs.length ? `; it has #${seqs.join(', #')}` : '; it has none'}.`, { code: 'evaluation_unknown' });
    }
    return pick(hit, `eval ${options.seq}`);
  }
  const counted = countedBest(evaluations);
  const countedRow = counted?.evaluationId != null ? evaluations.find((e) => e.id === counted.evaluationId) : undefined;
  if (countedRow) return pick(countedRow, 'best');
  const best = run.bestEvaluationId != null ? evaluations.find((e) => e.id === run.bestEvaluationId) : undefined;
  if (!best) {
    throw new UserInputError(`Run ${run.id} has no correct candidate to export (no best). \`kernelseek export ${run.id} --eval N\` exports one evaluation anyway, labelled as it stands.`, { code: 'no_best' });
  }
  const chosen = pick(best, 'best');
  if (chosen.standing !== 'subset') return chosen;
  // Chosen on a subset: the same source, measured on every scenario since, is what counts.
  const confirmations = evaluations.filter((e) => e.id !== best.id && e.candidateHash === best.candidateHash && e.scenarios === 'all' && resultOf(e));
  const confirmation = confirmations.at(-1);
  return confirmation ? pick(confirmation, 'best, on the full set') : chosen;
}
