import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/index.js';
import type { Run, Store } from '../db/index.js';
import { findTask, type LoadedTask } from '../harness/tasks.js';
import { renderScenarioChart } from './chart.js';
import { chooseEvaluation, type ChosenEvaluation } from './choose.js';
import { diffKernelFiles, type KernelDiff } from './diff.js';
import { buildEvidence } from './evidence.js';
import type { Evidence } from './evidence-types.js';
import { baselineFilesOf, candidateFilesOf, digestTask, type KernelFile } from './kernel-files.js';
import { renderEvidenceMarkdown } from './markdown.js';
import type { GitRunner } from './git.js';

/** Resolves a run's link for people (its Slack thread's permalink); null when there is none to give. */
export type RunLinkResolver = (run: Run) => Promise<string | null>;

/** Everything a result goes out with: the kernel, its diff against the baseline, the evidence. */
export interface RunExport {
  chosen: ChosenEvaluation;
  task: LoadedTask;
  candidate: KernelFile[];
  baseline: KernelFile[];
  diff: KernelDiff;
  evidence: Evidence;
  markdown: string;
  /** The chart is drawn on demand (Vega and resvg take a moment): `export --format patch` never needs it. */
  chart(): Promise<Buffer>;
}

export interface ExportRequest {
  config: Config;
  store: Store;
  runId: string;
  /** An evaluation number; absent: the run's best. */
  seq?: number | undefined;
  /** A folder in the team's repository to put the diff's paths under (none: the kernel's own file names). */
  prefix?: string | undefined;
  link?: RunLinkResolver | undefined;
  now?: () => Date;
  git?: GitRunner;
}

let version: string | undefined;
async function versionOf(repoRoot: string): Promise<string> {
  version ??= ((JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown');
  return version;
}

/**
 * Builds a run's export from the store and the trusted task folder: works for any run the
 * database holds, whichever host ran it (the kernel's source travels in the evaluation's row).
 */
export async function buildRunExport(request: ExportRequest): Promise<RunExport> {
  const { config, store, runId } = request;
  const run = await store.runs.get(runId);
  // The task first: the full set's size decides whether a result is verified.
  const loaded = run ? await findTask(config.core.tasksDir, run.task) : null;
  const chosen = await chooseEvaluation(store, runId, { seq: request.seq, totalScenarios: loaded ? loaded.scenarios.length : null });
  // chooseEvaluation refuses a run that is not in the store, so the task was found.
  if (!loaded) throw new Error(`run ${runId} has no task`);
  const candidate = candidateFilesOf(chosen.evaluation, loaded);
  const baseline = await baselineFilesOf(loaded);
  const pathEnv = config.publish.gitEnv.PATH;
  const diff = await diffKernelFiles(baseline, candidate, { prefix: request.prefix, pathEnv, ...(request.git ? { git: request.git } : {}) });
  const link = request.link ? await request.link(chosen.run).catch(() => null) : null;
  const evidence = buildEvidence({
    chosen,
    task: loaded,
    taskDigest: await digestTask(loaded),
    candidate,
    baseline,
    diff,
    link: link && /^https?:\/\//.test(link) ? link : null,
    version: await versionOf(config.core.repoRoot),
    now: (request.now ?? (() => new Date()))(),
  });
  let chart: Promise<Buffer> | undefined;
  return {
    chosen,
    task: loaded,
    candidate,
    baseline,
    diff,
    evidence,
    markdown: renderEvidenceMarkdown(evidence),
    chart: () => (chart ??= renderScenarioChart(evidence)),
  };
}

/** The names the files of an export folder get (also the Slack uploads' names). */
export function exportFileNames(exp: Pick<RunExport, 'chosen'>) {
  const stem = `${exp.chosen.run.id}-eval${exp.chosen.evaluation.seq ?? 0}`;
  return { patch: `${stem}.patch`, json: 'evidence.json', markdown: 'evidence.md', chart: 'speedups.png', kernelDir: 'kernel', stem };
}
