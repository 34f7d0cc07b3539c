import type { Config } from '../config/index.js';
import { AppError, UserInputError } from '../core/errors.js';
import type { Store } from '../db/index.js';
import { buildRunExport, type RunExport, type RunLinkResolver } from './export-run.js';
import { displayRepo, type GitRunner } from './git.js';
import { compareUrl, createPullRequest, parseGitHubRemote, type GitHubRepo, type OpenedPullRequest } from './github.js';
import { checkRelativePath } from './kernel-files.js';
import { escapeCell, evidenceTitle, renderEvidenceMarkdown } from './markdown.js';
import { pushKernelBranch } from './repo-branch.js';

/** GitHub's limit on a pull request's body, less a margin for what we add around the evidence. */
const BODY_MAX_CHARS = 60_000;

export interface PullRequestRequest {
  config: Config;
  store: Store;
  runId: string;
  seq?: number | undefined;
  /** Override the task's `upstream` (task.yaml). */
  repo?: string | undefined;
  path?: string | undefined;
  base?: string | undefined;
  title?: string | undefined;
  branch?: string | undefined;
  /** Commit the evidence (Markdown, JSON, chart) beside the kernel too; default: the task's `upstream.evidence`. */
  evidenceFiles?: boolean | undefined;
  draft?: boolean | undefined;
  /** The person who asked (named in the commit and the pull request). */
  requestedBy: string;
  link?: RunLinkResolver | undefined;
  git?: GitRunner;
  fetch?: typeof fetch;
}

export interface PullRequestOutcome {
  /** The repository, as it may be shown (displayRepo: no password or token). */
  repo: string;
  /** True when the repository is a URL a person elsewhere can use (not a path on this host). */
  repoIsUrl: boolean;
  github: GitHubRepo | null;
  branch: string;
  base: string;
  commit: string;
  paths: string[];
  /** The pull request GitHub opened; null when it was not opened through the API. */
  pullRequest: OpenedPullRequest | null;
  /** How to open it by hand, when it was not opened: a page to visit or a command to run. */
  manual: string | null;
  /** Why it was not opened through the API, when it was not. */
  notOpened: string | null;
  /** GitHub was asked and refused (or could not be reached): the branch is pushed, the request is not open. */
  apiFailed: boolean;
  title: string;
  export: RunExport;
}

const isUrl = (repo: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:/.test(repo);

/** Refuses anything but a counted result, saying why and what to do. */
function requireVerified(exp: RunExport): void {
  const { chosen } = exp;
  if (chosen.standing === 'verified') return;
  const which = `${chosen.run.id}'s ${chosen.chosenAs === 'best' ? 'best' : chosen.chosenAs} (eval #${chosen.evaluation.seq})`;
  const task = chosen.run.task;
  const fixes: Record<Exclude<typeof chosen.standing, 'verified'>, string> = {
    subset: `Only a result measured on the task's full set may become a pull request. Evaluate the kernel on every scenario first (\`kernelseek eval ${task} <kernel file> --scenarios all\`, or a run with \`--scenarios all\`); \`kernelseek export ${chosen.run.id}\` still writes it, labelled not verified.`,
    incorrect: `Only a correct result may become a pull request; \`kernelseek export ${chosen.run.id}\` shows where it fails.`,
    implausible: `The harness flagged it; have a person check the figures (\`kernelseek export ${chosen.run.id} --format md\`) before it goes out.`,
  };
  throw new UserInputError(`No pull request: ${which} is ${chosen.reason}. ${fixes[chosen.standing]}`, { code: `not_verified_${chosen.standing}` });
}

function upstreamOf(exp: RunExport, request: PullRequestRequest): { repo: string; path: string; base: string | null; evidenceFiles: boolean } {
  const up = exp.task.task.upstream as { repo?: string; path?: string; base?: string; evidence?: boolean } | undefined;
  const repo = request.repo ?? up?.repo;
  const rawPath = request.path ?? up?.path;
  if (!repo || !rawPath) {
    const missing = [!repo ? '--repo' : '', !rawPath ? '--path' : ''].filter(Boolean).join(' and ');
    throw new UserInputError(`Where does the kernel go? Give ${missing}, or record it in kernels/${exp.task.task.name}/task.yaml as \`upstream: {repo: <git URL>, path: <file or folder/>}\` (docs/tasks.md).`, { code: 'no_upstream' });
  }
  const folder = rawPath.endsWith('/');
  const target = checkRelativePath(rawPath, '--path');
  return { repo, path: folder ? `${target}/` : target, base: request.base ?? up?.base ?? null, evidenceFiles: request.evidenceFiles ?? up?.evidence === true };
}

/**
 * `kernelseek pr` and Slack's *Open pull request*: the chosen result (verified only) written into a
 * new branch of the team's repository, committed with its evidence, pushed, and — on GitHub with a
 * token — opened as a pull request whose body is the evidence. Elsewhere the branch is pushed and
 * the outcome says how to open the request by hand.
 */
export async function openRunPullRequest(request: PullRequestRequest): Promise<PullRequestOutcome> {
  const { config } = request;
  const exp = await buildRunExport({ config, store: request.store, runId: request.runId, seq: request.seq, link: request.link, ...(request.git ? { git: request.git } : {}) });
  requireVerified(exp);
  const target = upstreamOf(exp, request);
  const github = parseGitHubRemote(target.repo, config.publish.githubApiUrl);
  const token = config.publish.githubToken;
  const { run, evaluation } = exp.chosen;
  const branch = request.branch ?? `kernelseek/${run.id}-eval${evaluation.seq ?? 0}`;
  const title = request.title ?? `KernelSeek: ${evidenceTitle(exp.evidence)}`;
  const requested = `Requested by **${escapeCell(request.requestedBy)}** through KernelSeek (run ${run.id}, evaluation #${evaluation.seq}).`;

  let placed: { kernel: string[]; chart: string | null } = { kernel: [], chart: null };
  const pushed = await pushKernelBranch({
    repo: target.repo,
    base: target.base,
    branch,
    env: config.publish.gitEnv,
    ...(request.git ? { git: request.git } : {}),
    secrets: token ? [token] : [],
    // Credentials travel in git's environment, which only this user can read; never in argv or a URL.
    ...(github && token && /^https:\/\//i.test(target.repo)
      ? { pushEnv: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: `http.https://${github.host}/.extraheader`, GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}` } }
      : {}),
    message: `${title}\n\n${renderEvidenceMarkdown(exp.evidence, { preface: [requested] })}\nRequested-by: ${request.requestedBy.replace(/[\r\n]+/g, ' ')}\n`,
    place: async (probe) => {
      const folder = target.path.endsWith('/') || exp.candidate.length > 1 || (await probe.isFolder(target.path));
      const dir = target.path.replace(/\/+$/, '');
      if (!folder && exp.candidate.length !== 1) throw new UserInputError(`The kernel has ${exp.candidate.length} files: --path must be a folder (end it with /).`, { code: 'repo_path_file' });
      const kernel = folder ? exp.candidate.map((f) => ({ path: `${dir}/${f.path}`, content: f.content })) : [{ path: dir, content: exp.candidate[0]!.content }];
      const files: { path: string; content: string | Buffer }[] = [...kernel];
      placed = { kernel: kernel.map((f) => f.path), chart: null };
      if (target.evidenceFiles) {
        const stem = folder ? `${dir}/kernelseek` : dir;
        files.push({ path: `${stem}.evidence.md`, content: exp.markdown }, { path: `${stem}.evidence.json`, content: `${JSON.stringify(exp.evidence, null, 2)}\n` }, { path: `${stem}.speedups.png`, content: await exp.chart() });
        placed.chart = `${stem}.speedups.png`;
      }
      return files;
    },
  });

  const chartLine =
    placed.chart && github
      ? `![Speedup per scenario](https://${github.host}/${github.owner}/${github.name}/blob/${pushed.commit}/${placed.chart.split('/').map(encodeURIComponent).join('/')}?raw=true)`
      : placed.chart
        ? `Chart: \`${placed.chart}\` on this branch.`
        : `Chart (speedup per scenario, peers and goal): \`kernelseek export ${run.id} --eval ${evaluation.seq}\` writes it as speedups.png; \`kernelseek pr --evidence-files\` commits it beside the kernel.`;
  const body = renderEvidenceMarkdown(exp.evidence, { preface: [requested, chartLine], maxChars: BODY_MAX_CHARS });
  const outcome: PullRequestOutcome = {
    repo: displayRepo(target.repo),
    repoIsUrl: isUrl(target.repo),
    github,
    branch: pushed.branch,
    base: pushed.base,
    commit: pushed.commit,
    paths: pushed.paths,
    pullRequest: null,
    manual: null,
    notOpened: null,
    apiFailed: false,
    title,
    export: exp,
  };
  if (!github) {
    outcome.notOpened = 'the repository is not on GitHub';
    outcome.manual = `git request-pull ${pushed.base} ${displayRepo(target.repo)} ${pushed.branch}`;
    return outcome;
  }
  if (!token) {
    outcome.notOpened = 'no GITHUB_TOKEN is configured';
    outcome.manual = compareUrl(github, pushed.base, pushed.branch);
    return outcome;
  }
  try {
    outcome.pullRequest = await createPullRequest({ apiUrl: config.publish.githubApiUrl, token, repo: github, title, head: pushed.branch, base: pushed.base, body, draft: request.draft ?? false, ...(request.fetch ? { fetch: request.fetch } : {}) });
  } catch (error) {
    // The branch is pushed either way: say so, and how to finish by hand.
    if (!(error instanceof AppError)) throw error;
    outcome.notOpened = error.userMessage;
    outcome.apiFailed = true;
    outcome.manual = compareUrl(github, pushed.base, pushed.branch);
  }
  return outcome;
}
