import type { Config } from '../config/index.js';
import type { Store } from '../db/index.js';
import { buildRunExport, chooseEvaluation, exportFileNames, openRunPullRequest, standingLine, type PullRequestOutcome, type RunLinkResolver } from '../export/index.js';
import { findTask } from '../harness/tasks.js';

/** What a run's final card offers: *Export* for a verified result, *Open pull request* when its task names a repository too. */
export interface ResultOffer {
  runId: string;
  export: boolean;
  pullRequest: boolean;
}

export interface ExportedFiles {
  files: { filename: string; content: string; title: string }[];
  /** One line: whether the result is verified, and why. */
  standing: string;
  verified: boolean;
  seq: number | null;
}

/** A run's result taken out (src/export), as the Slack app uses it. */
export interface ResultsPort {
  /** What the final card offers; null when nothing (no verified result). Never throws. */
  offer(runId: string): Promise<ResultOffer | null>;
  /** The evidence Markdown and the patch, to upload into the run's thread. */
  exportFiles(runId: string, options?: { link?: RunLinkResolver }): Promise<ExportedFiles>;
  /** A branch and pull request on the task's repository (`upstream` in task.yaml), naming who asked. */
  openPullRequest(runId: string, options: { requestedBy: string; link?: RunLinkResolver }): Promise<PullRequestOutcome>;
}

export function createResultsPort(deps: { config: Config; store: Store }): ResultsPort {
  const { config, store } = deps;
  return {
    async offer(runId) {
      try {
        const run = await store.runs.get(runId);
        if (!run) return null;
        const task = await findTask(config.core.tasksDir, run.task);
        const chosen = await chooseEvaluation(store, runId, { totalScenarios: task.scenarios.length });
        if (chosen.standing !== 'verified') return null;
        const up = task.task.upstream;
        return { runId, export: true, pullRequest: Boolean(up?.repo && up.path) };
      } catch {
        // No best, the task gone: the card simply offers nothing.
        return null;
      }
    },
    async exportFiles(runId, options = {}) {
      const exp = await buildRunExport({ config, store, runId, link: options.link });
      const names = exportFileNames(exp);
      const seq = exp.chosen.evaluation.seq;
      return {
        files: [
          { filename: `${names.stem}-evidence.md`, content: exp.markdown, title: `Evidence: ${runId} eval #${seq}${exp.evidence.verified ? '' : ' (NOT VERIFIED)'}` },
          { filename: names.patch, content: exp.diff.patch, title: `Diff against the baseline: ${runId} eval #${seq}` },
        ],
        standing: standingLine(exp.evidence),
        verified: exp.evidence.verified,
        seq,
      };
    },
    openPullRequest: (runId, options) => openRunPullRequest({ config, store, runId, requestedBy: options.requestedBy, link: options.link }),
  };
}
