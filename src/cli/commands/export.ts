import { lstat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import type { Config } from '../../config/index.js';
import { UserInputError } from '../../core/errors.js';
import { createStore, openDatabase, type Run } from '../../db/index.js';
import { buildRunExport, standingLine, writeExportDir, type RunLinkResolver } from '../../export/index.js';
import { configOf, writeLine, type CliContext } from '../context.js';

const FORMATS = ['dir', 'patch', 'json', 'md'] as const;
type Format = (typeof FORMATS)[number];

/** `--eval N`: a whole number (0 is the full-set evaluation a quick run's best gets at its end). */
export function parseEvalOption(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,9}$/.test(raw.trim())) throw new UserInputError(`--eval ${raw}: give an evaluation number, e.g. --eval 3 (\`kernelseek trace <run>\` lists them).`, { code: 'export_option' });
  return Number(raw.trim());
}

/**
 * The permalink of a Slack run's thread, when this host has a Slack token (the evidence names where
 * the run can be opened); null otherwise. Slack's client is loaded only then.
 */
export function slackLinkResolver(config: Config): RunLinkResolver {
  return async (run: Run) => {
    if (!run.slackChannel || !run.slackThreadTs || !config.slack.botToken) return null;
    const { createSlackWebClient } = await import('../../slack/client.js');
    const client = createSlackWebClient({ token: config.slack.botToken, apiUrl: config.slack.apiUrl, timeoutMs: 5000 });
    const answer = await client.chat.getPermalink({ channel: run.slackChannel, message_ts: run.slackThreadTs });
    return typeof answer.permalink === 'string' ? answer.permalink : null;
  };
}

export function registerExport(program: Command, ctx: CliContext): void {
  program
    .command('export')
    .description("Export a run's result: the kernel, its diff against the task's baseline, and the evidence (JSON, Markdown, chart)")
    .argument('<run>', 'run id, e.g. ks-7f3a2c9d')
    .option('--best', "the run's best (the default): on the full set when it was measured there")
    .option('--eval <n>', 'this evaluation of the run instead of its best')
    .option('--format <format>', `dir (a folder with everything), patch, json or md (to standard output or --out)`, 'dir')
    .option('--out <path>', 'the folder (format dir; default ./<run>-eval<n>) or file to write')
    .option('--force', 'overwrite files that are already there')
    .action(async (runId: string, opts: { best?: boolean; eval?: string; format: string; out?: string; force?: boolean }) => {
      if (!(FORMATS as readonly string[]).includes(opts.format)) throw new UserInputError(`--format ${opts.format}: give one of ${FORMATS.join(', ')}.`, { code: 'export_option' });
      if (opts.best && opts.eval !== undefined) throw new UserInputError('Give --best or --eval N, not both.', { code: 'export_option' });
      const format = opts.format as Format;
      const seq = parseEvalOption(opts.eval);
      const config = configOf(ctx);
      const handle = await openDatabase(config.db);
      try {
        await handle.migrate();
        const store = createStore(handle.db);
        const exp = await buildRunExport({ config, store, runId, seq, link: slackLinkResolver(config) });
        const standing = standingLine(exp.evidence).replace(/\*\*/g, '');
        if (format === 'dir') {
          const dir = path.resolve(ctx.cwd, opts.out ?? `${exp.chosen.run.id}-eval${exp.chosen.evaluation.seq ?? 0}`);
          const written = await writeExportDir(exp, dir, { force: opts.force === true });
          writeLine(ctx.stdout, `Exported ${exp.chosen.run.id} eval #${exp.chosen.evaluation.seq} (${exp.chosen.chosenAs}) to ${dir}:`);
          for (const file of written) writeLine(ctx.stdout, `  ${path.relative(dir, file)}`);
          writeLine(ctx.stdout, standing);
          if (exp.evidence.verified) writeLine(ctx.stdout, `To open a pull request: kernelseek pr ${exp.chosen.run.id}${seq !== undefined ? ` --eval ${seq}` : ''} --repo <git URL> --path <file or folder/> (or upstream: in the task.yaml)`);
          return;
        }
        const text = format === 'patch' ? exp.diff.patch : format === 'json' ? `${JSON.stringify(exp.evidence, null, 2)}\n` : exp.markdown;
        if (!opts.out) {
          ctx.stdout.write(text);
        } else {
          const file = path.resolve(ctx.cwd, opts.out);
          const st = await lstat(file).catch(() => undefined);
          if (st && (!opts.force || !st.isFile())) throw new UserInputError(`${file} already exists: give another --out, or --force to overwrite it.`, { code: 'export_exists' });
          await writeFile(file, text);
          writeLine(ctx.stderr, `Wrote ${file}.`);
        }
        // Said where a person sees it, not inside the patch or JSON they may pipe on.
        if (!exp.evidence.verified) writeLine(ctx.stderr, standing);
      } finally {
        await handle.close();
      }
    });
}
