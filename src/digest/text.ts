import { renderTable } from '../core/text-table.js';
import { isQuietWindow, type DigestFigures } from './figures.js';
import { describeChange, describeEvaluationMix, describeWindow, formatSeconds, formatSpeedup, formatUsd, plural, taskLabel, truncate } from './format.js';

/** Aligned columns (the CLI's table renderer: numbers right-aligned), one string a line. */
const columns = (headers: string[], rows: string[][]): string[] => renderTable(headers, rows).split('\n');

const indent = (lines: string[]) => lines.map((l) => `  ${l}`);
const count = (n: number) => n.toLocaleString('en-US');

/**
 * The digest for a terminal (`kernelseek digest --print`): the same figures as the Slack message,
 * every line of every list, no markup.
 */
export function renderDigestText(f: DigestFigures, options: { timeZone: string; title?: string }): string {
  const out = [`${options.title ?? 'KernelSeek digest'} — ${describeWindow(f.window, options.timeZone)}`, ''];
  if (isQuietWindow(f)) {
    out.push('No runs, evaluations, model calls or questions in this window.');
    return out.join('\n');
  }
  const r = f.runs;
  const e = f.evaluations;
  out.push(
    ...columns(
      ['', ''],
      [
        ['Runs', `${r.active} active, ${r.started} started, ${r.finished} finished, ${r.stopped} stopped, ${r.failed} failed`],
        ['Evaluations', `${e.total}${e.total ? ` (${describeEvaluationMix(e)})` : ''}${e.adHoc ? `, ${e.adHoc} outside runs` : ''}`],
        ['Harness time', `${formatSeconds(e.harnessSeconds)} (${formatSeconds(e.gpuSeconds)} on GPU)`],
        ['Model', `${formatUsd(f.model.costUsd)} over ${plural(f.model.steps, 'step')} (${count(f.model.inputTokens)} input, ${count(f.model.outputTokens)} output tokens)`],
        ['Questions', `${f.questions.human} from people (${plural(f.questions.people, 'person', 'people')}), ${f.questions.bank} from the bank`],
      ],
    ).slice(1),
  );
  if (f.tasks.length > 0) {
    out.push('', 'Best speedups per task (counted: correct on every scenario of the full set)');
    out.push(
      ...indent(
        columns(
          ['task', 'best', 'vs peer', 'peer', 'change', 'run', 'evals', 'correct', 'harness', 'cost'],
          f.tasks.map((t) => [
            taskLabel(t),
            formatSpeedup(t.best?.speedupVsBaseline),
            formatSpeedup(t.best?.speedupVsPeer),
            t.best?.peer ?? '-',
            describeChange(t) || '-',
            t.best?.runId ?? '-',
            String(t.evaluations),
            String(t.correct),
            formatSeconds(t.harnessSeconds),
            formatUsd(t.costUsd),
          ]),
        ),
      ),
    );
  }
  if (f.questions.top.length > 0) {
    out.push('', 'Questions before the largest gains (gain = best after the question ÷ best before)');
    out.push(
      ...indent(
        columns(
          ['gain', 'run', 'task', 'asked by', 'question'],
          f.questions.top.map((q) => [
            q.final ? formatSpeedup(q.gain) : `${formatSpeedup(q.gain)} so far`,
            q.runId,
            q.task,
            q.source === 'bank' ? `bank:${q.bankId ?? '?'}` : q.author,
            `"${truncate(q.text, 100)}"`,
          ]),
        ),
      ),
    );
  }
  if (r.list.length > 0) {
    out.push('', 'Runs');
    out.push(
      ...indent(
        columns(
          ['run', 'task', 'state', 'best', 'vs peer', 'evals', 'cost', 'owner'],
          r.list.map((run) => [
            run.id,
            run.arch ? `${run.task} (${run.arch})` : run.task,
            (run.state === run.status ? run.state : `${run.state} (now ${run.status})`) + (run.state === 'finished' && run.endReason === 'converged' ? ' (converged)' : ''),
            formatSpeedup(run.bestSpeedup),
            formatSpeedup(run.bestSpeedupVsPeer),
            String(run.evaluations),
            formatUsd(run.costUsd),
            run.owner,
          ]),
        ),
      ),
    );
  }
  return out.join('\n');
}
