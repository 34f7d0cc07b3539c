import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { UserInputError } from '../../core/errors.js';
import { createStore, openDatabase } from '../../db/index.js';
import {
  computeCurrentDigest,
  createSlackWebClient,
  createWebApiDigestPoster,
  digestChartPoints,
  postDigestNow,
  renderDigestText,
  renderSpeedupChart,
  windowSince,
} from '../../digest/index.js';
import { configOf, loggerOf, writeLine, type CliContext } from '../context.js';

interface DigestOptions {
  print?: boolean;
  post?: boolean;
  since: string;
  until?: string;
  json?: boolean;
  tz?: string;
  chart?: string;
  channel?: string;
}

function parseUntil(text: string | undefined): Date {
  if (text === undefined) return new Date();
  const at = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(at.getTime())) {
    throw new UserInputError(`--until must be a date and time such as 2026-03-14T09:00Z (got ${JSON.stringify(text)})`, { code: 'digest_until_invalid' });
  }
  return at;
}

function checkZone(zone: string): string {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return zone;
  } catch {
    throw new UserInputError(`--tz must be an IANA time zone such as UTC or Europe/Berlin (got ${JSON.stringify(zone)})`, { code: 'digest_tz_invalid' });
  }
}

export function registerDigest(program: Command, ctx: CliContext): void {
  program
    .command('digest')
    .description('Show the digest of recent activity (runs, best speedups, cost, questions), or post it to Slack now')
    .option('--print', 'print the digest in the terminal (the default)')
    .option('--post', 'post the digest to Slack now (DIGEST_CHANNEL, or --channel)')
    .option('--since <duration>', 'how far back the digest looks, e.g. 24h, 90m, 7d', '24h')
    .option('--until <time>', 'end the window at this time instead of now (ISO 8601, e.g. 2026-03-14T09:00Z)')
    .option('--json', 'print the figures as JSON')
    .option('--tz <zone>', 'time zone for the times shown (default DIGEST_TZ)')
    .option('--chart <file>', 'also write the speedup chart to this PNG file')
    .option('--channel <id>', 'Slack channel id for --post (default DIGEST_CHANNEL)')
    .action(async (opts: DigestOptions) => {
      const config = configOf(ctx);
      const timeZone = checkZone(opts.tz ?? config.digest.timezone);
      const window = windowSince(opts.since, parseUntil(opts.until));
      const channel = opts.channel ?? config.digest.channel;
      if (opts.post) {
        if (!channel) throw new UserInputError('--post needs a channel: set DIGEST_CHANNEL or pass --channel C012AB3CD', { code: 'digest_channel_missing' });
        if (!/^[CG][A-Z0-9]{2,}$/.test(channel)) {
          throw new UserInputError(`--channel must be a Slack channel id such as C012AB3CD (got ${JSON.stringify(channel)})`, { code: 'digest_channel_invalid' });
        }
        if (opts.until) throw new UserInputError('--post always covers the period up to now: leave out --until', { code: 'digest_until_with_post' });
      }
      const handle = await openDatabase(config.db);
      try {
        await handle.migrate();
        const store = createStore(handle.db);
        const show = opts.json || opts.print || !opts.post;
        const figures = show || opts.chart ? await computeCurrentDigest(store, window) : undefined;
        if (figures && opts.json) writeLine(ctx.stdout, JSON.stringify(figures, null, 2));
        else if (figures && show) writeLine(ctx.stdout, renderDigestText(figures, { timeZone }));
        if (figures && opts.chart) {
          const file = path.resolve(ctx.cwd, opts.chart);
          const points = digestChartPoints(figures);
          await writeFile(file, await renderSpeedupChart(points, { x: 'time', timeZone, title: 'Best speedup vs baseline, per task' }));
          writeLine(ctx.stderr, points.length ? `Chart written to ${file}.` : `No counted candidate in the window: ${file} shows an empty chart.`);
        }
        if (opts.post) {
          const poster = createWebApiDigestPoster(createSlackWebClient(config.slack));
          const posted = await postDigestNow(
            { store, poster, timeZone, logger: loggerOf(config, 'digest'), now: () => window.to },
            { channel: channel!, since: opts.since },
          );
          const chart = posted.chart === 'failed' ? `the chart could not be posted (${posted.chartError})` : `chart ${posted.chart === 'posted' ? 'posted' : 'not needed (nothing to draw)'}`;
          writeLine(ctx.stderr, `Posted the digest to ${posted.channel} (message ${posted.messageTs}); ${chart}.`);
          if (posted.chart === 'failed') ctx.exitCode = 1;
        }
      } finally {
        await handle.close();
      }
    });
}
