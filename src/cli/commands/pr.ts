import os from 'node:os';
import type { Command } from 'commander';
import type { Config } from '../../config/index.js';
import { createStore, openDatabase } from '../../db/index.js';
import { openRunPullRequest, runGit } from '../../export/index.js';
import { configOf, writeLine, type CliContext } from '../context.js';
import { parseEvalOption, slackLinkResolver } from './export.js';

/** Who asks, when --requested-by is not given: the person's git name, else their login. */
async function defaultRequester(config: Config, cwd: string): Promise<string> {
  const r = await runGit({ args: ['config', '--get', 'user.name'], cwd, env: config.publish.gitEnv }).catch(() => undefined);
  const name = r?.exitCode === 0 ? r.stdout.trim() : '';
  if (name) return name;
  try {
    return os.userInfo().username;
  } catch {
    return 'a KernelSeek user';
  }
}

export function registerPr(program: Command, ctx: CliContext): void {
  program
    .command('pr')
    .description("Open a pull request with a run's verified result on the team's repository: a new branch, the kernel, the evidence as its body")
    .argument('<run>', 'run id, e.g. ks-7f3a2c9d')
    .option('--repo <url>', "the team's repository (a git URL or path); default: the task's upstream.repo")
    .option('--path <path>', 'the file, or folder ending in /, the kernel goes to in that repository; default: upstream.path')
    .option('--base <branch>', "the branch to start from and merge into; default: upstream.base, else the repository's default branch")
    .option('--title <title>', 'the pull request title (default: the task, the speedups and the run)')
    .option('--branch <name>', 'the new branch (default kernelseek/<run>-eval<n>); an existing branch is refused')
    .option('--eval <n>', "this evaluation of the run instead of its best (it must be verified)")
    .option('--evidence-files', 'also commit the evidence (Markdown, JSON, chart) beside the kernel; the pull request then shows the chart')
    .option('--draft', 'open it as a draft pull request')
    .option('--requested-by <name>', 'who asks (named in the commit and the pull request); default: your git user.name')
    .action(async (runId: string, opts: { repo?: string; path?: string; base?: string; title?: string; branch?: string; eval?: string; evidenceFiles?: boolean; draft?: boolean; requestedBy?: string }) => {
      const seq = parseEvalOption(opts.eval);
      const config = configOf(ctx);
      const handle = await openDatabase(config.db);
      try {
        await handle.migrate();
        const store = createStore(handle.db);
        const outcome = await openRunPullRequest({
          config,
          store,
          runId,
          seq,
          repo: opts.repo,
          path: opts.path,
          base: opts.base,
          title: opts.title,
          branch: opts.branch,
          evidenceFiles: opts.evidenceFiles,
          draft: opts.draft,
          requestedBy: opts.requestedBy ?? (await defaultRequester(config, ctx.cwd)),
          link: slackLinkResolver(config),
        });
        writeLine(ctx.stdout, `Pushed ${outcome.branch} to ${outcome.repo} (from ${outcome.base}, commit ${outcome.commit.slice(0, 12)}): ${outcome.paths.join(', ')}.`);
        if (outcome.pullRequest) {
          writeLine(ctx.stdout, `Pull request #${outcome.pullRequest.number}: ${outcome.pullRequest.url}`);
          return;
        }
        writeLine(ctx.stdout, `No pull request was opened: ${outcome.notOpened}.`);
        if (outcome.github) {
          writeLine(ctx.stdout, `Open it at ${outcome.manual}`);
        } else {
          writeLine(ctx.stdout, 'Open the request by hand; for a summary to send:');
          writeLine(ctx.stdout, `  ${outcome.manual}`);
        }
        writeLine(ctx.stdout, `Its description (the evidence): kernelseek export ${runId} --eval ${outcome.export.chosen.evaluation.seq} --format md`);
        if (outcome.apiFailed) ctx.exitCode = 1;
      } finally {
        await handle.close();
      }
    });
}
