import type { Evidence, Figure } from './evidence-types.js';

/**
 * The evidence as a reviewer reads it (a pull request's body, a commit message, a Slack file):
 * what was measured, where, against what, with which verdict, and whether it counts.
 */

const x = (v: number | null | undefined, digits = 2) => (typeof v === 'number' ? `${v.toFixed(v >= 100 ? 0 : digits)}x` : '–');
const ms = (v: number | null | undefined) => (typeof v === 'number' ? (v >= 100 ? v.toFixed(1) : v.toPrecision(4)) : '–');
const sci = (v: number | null | undefined) => (typeof v === 'number' ? v.toExponential(1) : '–');

/** Free text (a harness's reason, a task summary) as inert Markdown: no markup, links or HTML, one line, safe in a table. */
export function escapeCell(text: string): string {
  return cell(text.replace(/\\/g, '\\\\').replace(/([`*[\]<>#!~])/g, '\\$1'));
}

/** Markdown we wrote ourselves, kept inside one table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' ');
}

function figure(f: Figure): string {
  const ci = f.ci ? ` [${f.ci[0].toFixed(2)}, ${f.ci[1].toFixed(2)}]` : '';
  return `${x(f.value)}${ci}${f.verdict ? ` ${f.verdict}` : ''}`;
}

function headline(e: Evidence): string {
  const peer = e.summary.best_peer ? e.summary.vs_peer[e.summary.best_peer] : undefined;
  const vsPeer = peer && e.summary.best_peer ? `, ${x(peer.value)} vs ${e.summary.best_peer}` : '';
  return `${e.task.name}: ${x(e.summary.vs_baseline.value)} vs baseline${vsPeer}`;
}

/** One line saying whether this counts, first thing a reviewer sees. */
export function standingLine(e: Evidence): string {
  if (e.verified) return `**Verified** — ${escapeCell(e.standing_reason)}.`;
  const label = e.standing === 'subset' ? 'NOT VERIFIED (quick subset)' : e.standing === 'incorrect' ? 'NOT VERIFIED (not correct)' : 'NOT VERIFIED (flagged implausible)';
  return `**${label}** — ${escapeCell(e.standing_reason)}.`;
}

export function evidenceTitle(e: Evidence): string {
  return `${headline(e)} (${e.verified ? 'verified' : 'not verified'}, ${e.run.id} eval #${e.evaluation.seq ?? '?'})`;
}

function environmentRows(e: Evidence): [string, string][] {
  const env = e.environment;
  const missing = (k: string) => (env.not_recorded.includes(k) ? 'not recorded in this result' : '–');
  const rows: [string, string][] = [];
  if (env.device === 'cuda') {
    rows.push(['GPU', `${env.gpu ?? missing('gpu')}${env.arch ? ` (${env.arch})` : ''}`], ['driver', env.driver ?? missing('driver')], ['CUDA', env.cuda ?? missing('cuda')]);
  } else {
    rows.push(['device', `CPU${env.cpu ? `: ${env.cpu}` : ''}`]);
  }
  rows.push(
    ['PyTorch (reference, peers)', env.torch ?? missing('torch')],
    ['harness', `${env.harness_version ?? missing('harness_version')}; commit ${env.harness_commit ?? missing('harness_commit')}`],
    ['compiler', `${env.compiler ? `\`${env.compiler.replace(/`/g, "'")}\`` : missing('compiler')}; version ${env.compiler_version ?? missing('compiler_version')}`],
  );
  if (env.timing_clock) rows.push(['timing clock', env.timing_clock]);
  return rows;
}

export interface MarkdownOptions {
  /** Cut the scenario table to fit (a pull request body holds 65,536 characters). */
  maxChars?: number;
  /** Lines put right under the title (who asked for a pull request, where the chart is). */
  preface?: string[];
}

/** The evidence as Markdown. */
export function renderEvidenceMarkdown(e: Evidence, options: MarkdownOptions = {}): string {
  const peers = Object.keys(e.summary.vs_peer);
  const head: string[] = [`# ${escapeCell(headline(e))}`, '', standingLine(e), '', ...(options.preface?.length ? [...options.preface, ''] : [])];
  const facts: [string, string][] = [
    ['run', `${e.run.id} (${e.run.status}${e.run.end_reason ? `: ${escapeCell(e.run.end_reason)}` : ''}, ${e.run.evaluations} evaluations, model ${escapeCell(e.run.model)})${e.run.link ? ` — ${e.run.link}` : ''}`],
    ['evaluation', `#${e.evaluation.seq ?? '?'} (${e.chosen_as}; job ${e.evaluation.job_id ?? '–'}), finished ${e.evaluation.finished_at ?? '–'}`],
    ['scenarios', `${e.scenario_set.full ? 'full set' : `subset (${e.scenario_set.name})`}: ${e.scenario_set.evaluated}${e.scenario_set.total !== null ? ` of ${e.scenario_set.total}` : ''}, ${e.summary.correct} correct`],
    ['task', `${escapeCell(e.task.name)}${e.task.summary ? ` — ${escapeCell(e.task.summary)}` : ''}`],
    ['task digest', e.task.digest ? `\`${e.task.digest}\` (${e.task.digest_of.join(', ')})` : 'task folder not found'],
    ['kernel', e.kernel.files.map((f) => `\`${f.path}\` (sha256 ${f.sha256.slice(0, 16)}…, ${f.bytes} bytes)`).join(', ')],
    ['diff vs baseline', `${e.diff.files_changed} file(s), +${e.diff.insertions} −${e.diff.deletions}`],
    ...environmentRows(e),
  ];
  if (e.task.goal) {
    const g = e.summary.goal;
    facts.push(['goal', `${e.task.goal.speedup}x vs ${e.task.goal.vs.replace('_', ' ')}${g ? `: ${x(g.value)}, ${g.met ? 'met' : 'not met'}` : ''}`]);
  }
  if (e.run.full_set_check && !e.scenario_set.full) {
    const c = e.run.full_set_check;
    facts.push(['full-set check at the run\'s end', `${c.correct ? 'correct' : `not correct (${escapeCell(c.status)}${c.reason ? `: ${escapeCell(c.reason)}` : ''})`} on ${c.scenarios} scenarios, ${x(c.speedup_vs_baseline)} vs baseline (no per-scenario record kept)`]);
  }
  const factTable = ['| | |', '|---|---|', ...facts.map(([k, v]) => `| ${k} | ${cell(v)} |`)];

  const summary = [
    '## Summary (geometric mean over scenarios, 95 % interval, verdict)',
    '',
    `- vs baseline: ${figure(e.summary.vs_baseline)}`,
    ...peers.map((p) => `- vs ${p}: ${figure(e.summary.vs_peer[p]!)}${e.summary.best_peer === p ? ' (the fastest peer)' : ''}`),
    ...(e.summary.flags.length ? [`- flags: ${e.summary.flags.join(', ')}`] : []),
    '',
    'A verdict is `faster` or `slower` only when the whole interval clears 1.0 by 1 %; `same` otherwise.',
  ];

  const columns = ['scenario', 'correct', 'max err', 'tolerance', 'candidate ms', 'baseline ms', ...peers.map((p) => `${p} ms`), 'vs baseline', ...peers.map((p) => `vs ${p}`)];
  const rowOf = (s: Evidence['scenarios'][number]) =>
    `| ${[
      escapeCell(s.id),
      s.correct ? 'yes' : `**no** (${escapeCell(s.status)})`,
      sci(s.max_abs_err),
      sci(s.tolerance),
      ms(s.time_ms),
      ms(s.baseline_ms),
      ...peers.map((p) => ms(s.peer_ms[p])),
      figure(s.vs_baseline),
      ...peers.map((p) => (s.vs_peer[p] ? figure(s.vs_peer[p]) : '–')),
    ].join(' | ')} |`;
  const tableHead = ['## Scenarios', '', `| ${columns.join(' | ')} |`, `|${columns.map(() => '---').join('|')}|`];

  const correctness = ['## Correctness', '', `${e.correctness.rule ? `Rule \`${e.correctness.rule}\` (factor ${e.correctness.factor}, atol ${e.correctness.atol}). ` : ''}${e.correctness.description}`];
  const failing = e.scenarios.filter((s) => !s.correct);
  if (failing.length > 0) correctness.push('', ...failing.slice(0, 20).map((s) => `- ${escapeCell(s.id)}: ${escapeCell(s.reason ?? s.status)}`));
  const notes = e.notes.length ? ['## Notes from the harness', '', ...e.notes.map((n) => `- ${escapeCell(n)}`)] : [];
  const tail = [
    ...correctness,
    '',
    ...notes,
    ...(notes.length ? [''] : []),
    `<sub>Evidence \`${e.schema}\` written by KernelSeek ${e.generator.version} at ${e.generated_at}; the same in JSON: \`kernelseek export ${e.run.id} --eval ${e.evaluation.seq ?? 0} --format json\`.</sub>`,
    '',
  ];

  const fixed = [...head, ...factTable, '', ...summary, '', ...tableHead];
  const budget = options.maxChars ?? Number.POSITIVE_INFINITY;
  const used = fixed.join('\n').length + tail.join('\n').length + 200;
  const rows: string[] = [];
  let size = used;
  for (const [i, s] of e.scenarios.entries()) {
    const row = rowOf(s);
    if (size + row.length + 1 > budget) {
      rows.push('', `*${e.scenarios.length - i} more scenario(s) not shown here: the evidence JSON and the commit message hold them all.*`);
      break;
    }
    rows.push(row);
    size += row.length + 1;
  }
  return [...fixed, ...rows, '', ...tail].join('\n');
}
