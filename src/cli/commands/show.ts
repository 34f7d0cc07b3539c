import type { Command } from 'commander';
import { UserInputError } from '../../core/errors.js';
import { configOf, writeLine, type CliContext } from '../context.js';

/** The text a tool result holds (a string, or text blocks), as the model read it. */
function resultText(result: unknown): string {
  if (typeof result === 'string') return result;
  if (Array.isArray(result)) return result.map((b) => (b && typeof b === 'object' && typeof (b as { text?: unknown }).text === 'string' ? (b as { text: string }).text : '')).join('\n');
  return result == null ? '' : JSON.stringify(result);
}

const x = (v: number | null | undefined) => (v == null ? '-' : `${v.toFixed(2)}x`);

/** `eval 3`, `eval3`, `#3` or `3`: the evaluation's number, or a UserInputError saying how to write it. */
export function parseEvalArg(words: string[]): number | undefined {
  const joined = words.join(' ').trim();
  if (joined === '') return undefined;
  const m = /^(?:eval\s*)?#?(\d+)$/i.exec(joined);
  if (!m) throw new UserInputError(`"${joined}": name an evaluation as \`eval N\`, e.g. \`kernelseek show ks-7f3a2c9d eval 3\`.`, { code: 'show_option' });
  return Number(m[1]);
}

export function registerShow(program: Command, ctx: CliContext): void {
  program
    .command('show')
    .description("Show a run (its counted best, every evaluation's headline) or one evaluation's whole result as the model saw it, with the per-scenario table")
    .argument('<run>', 'run id, e.g. ks-7f3a2c9d')
    .argument('[eval...]', 'eval N: one evaluation')
    .option('--json', "with eval N: the harness's result as JSON")
    .action(async (runId: string, words: string[], opts: { json?: boolean }) => {
      const seq = parseEvalArg(words);
      const config = configOf(ctx);
      const [{ createStore, openDatabase, migrateIfNeeded }, { describeRun, detailsOf, headlineOf }] = await Promise.all([import('../../db/index.js'), import('../../agent/terminal.js')]);
      const handle = await openDatabase(config.db);
      try {
        await migrateIfNeeded(handle);
        const store = createStore(handle.db);
        const run = await store.runs.get(runId);
        if (!run) throw new UserInputError(`There is no run '${runId}' in this database; \`kernelseek runs\` lists them.`, { code: 'run_unknown' });
        const evaluations = (await store.evaluations.forRun(run.id)).filter((e) => e.seq != null);
        if (seq === undefined) {
          const view = describeRun(run);
          const best = view.best ? `${x(view.best.speedupVsBaseline)} vs baseline${view.best.seq != null ? ` (eval #${view.best.seq}${view.best.fullSetCheck ? ', its full-set check' : ''})` : ''}` : 'none (nothing correct on every scenario beat the baseline)';
          writeLine(ctx.stdout, `Run ${run.id} on ${run.task}: ${view.interrupted ? 'interrupted' : run.status}${run.endReason ? ` (${run.endReason})` : ''}; ${run.evalsUsed} evaluations, ${run.stepsUsed} model steps, $${run.costUsd.toFixed(4)}.`);
          writeLine(ctx.stdout, `Counted best: ${best}.`);
          if (view.quickBest) writeLine(ctx.stdout, `Best on the quick subset (not counted): ${x(view.quickBest.speedupVsBaseline)} vs baseline.`);
          writeLine(ctx.stdout, evaluations.length > 0 ? 'Evaluations:' : 'No evaluation yet.');
          for (const e of evaluations) writeLine(ctx.stdout, `  ${e.status === 'pending' ? `eval #${e.seq}: running` : headlineOf(e)}`);
          if (evaluations.length > 0) writeLine(ctx.stdout, `One evaluation's whole result: kernelseek show ${run.id} eval <n>`);
          return;
        }
        const e = evaluations.find((v) => v.seq === seq);
        if (!e) {
          const have = evaluations.map((v) => `#${v.seq}`).join(', ');
          throw new UserInputError(`Run ${run.id} has no evaluation #${seq}${have ? `; it has ${have}` : '; it has none yet'}.`, { code: 'evaluation_unknown' });
        }
        if (opts.json) {
          writeLine(ctx.stdout, JSON.stringify(e.result, null, 2));
          return;
        }
        if (e.status === 'pending') {
          writeLine(ctx.stdout, `eval #${seq} of ${run.id} is still running.`);
          return;
        }
        // What the model read: the evaluate call's stored result (the call that reserved this number).
        const toolSeqs = (run.state as { toolSeqs?: Record<string, { evalSeq?: number }> } | null)?.toolSeqs ?? {};
        const useId = Object.entries(toolSeqs).find(([, v]) => v.evalSeq === seq)?.[0];
        const calls = await store.transcript.toolCalls(run.id);
        const call = calls.find((c) => c.toolUseId === useId) ?? calls.find((c) => c.name === 'evaluate' && new RegExp(`^Evaluation #${seq}\\b`).test(resultText(c.result)));
        writeLine(ctx.stdout, `== eval #${seq} of ${run.id}: what the model read ==`);
        writeLine(ctx.stdout, call?.result != null ? resultText(call.result) : '(no tool result stored for it: the full-set check of a quick run, or a run from before results were kept)');
        writeLine(ctx.stdout);
        writeLine(ctx.stdout, '== the whole result: intervals and verdicts vs the baseline and the peers, per scenario ==');
        writeLine(ctx.stdout, detailsOf(e));
      } finally {
        await handle.close();
      }
    });
}
