/**
 * A verified result out (DESIGN §12): `kernelseek export` (the kernel, its diff against the task's
 * baseline, the evidence in JSON and Markdown, a chart) and `kernelseek pr` (a branch on the team's
 * repository and a pull request whose body is the evidence). Slack's *Export* and *Open pull
 * request* buttons use the same functions. Only a counted result goes out as verified.
 */
export { chooseEvaluation, judgeEvaluation, resultOf, type ChosenEvaluation, type Judgement, type ScenarioSet, type Standing } from './choose.js';
export { buildRunExport, exportFileNames, type ExportRequest, type RunExport, type RunLinkResolver } from './export-run.js';
export { writeExportDir } from './write-dir.js';
export { buildEvidence, evidenceProblems, EVIDENCE_SCHEMA_FILE } from './evidence.js';
export { EVIDENCE_SCHEMA, type Evidence, type Figure, type ScenarioEvidence } from './evidence-types.js';
export { renderEvidenceMarkdown, evidenceTitle, standingLine } from './markdown.js';
export { buildScenarioChartSpec, renderScenarioChart, scenarioChartRows, type ChartRow } from './chart.js';
export { diffKernelFiles, type KernelDiff } from './diff.js';
export { checkRelativePath, type KernelFile } from './kernel-files.js';
export { openRunPullRequest, type PullRequestOutcome, type PullRequestRequest } from './pull-request.js';
export { parseGitHubRemote, compareUrl, createPullRequest, GitHubError, type GitHubRepo, type OpenedPullRequest } from './github.js';
export { runGit, type GitRunner, type GitCall, type GitOutput } from './git.js';
export { scrubPaths } from './scrub.js';
