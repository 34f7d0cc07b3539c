import type { Command } from 'commander';
// The run view's own module and the run states' (no database driver, no engine): with a current
// snapshot of the embedded database's runs, `kernelseek runs` never loads either (issue 42).
import { describeRun, type RunView } from '../../agent/run-view.js';
import { UserInputError } from '../../core/errors.js';
import type { Run } from '../../db/index.js';
import { RUN_STATUSES, type RunStatus } from '../../db/run-status.js';
import { readRunSnapshot } from '../../db/run-snapshot.js';
import { configOf, type CliContext } from '../context.js';
import { writeRows } from '../table.js';

/** What `kernelseek runs` shows per run (and prints as JSON with --json). */
export interface RunListing {
  id: string;
  task: string;
  /** The run's status, or `interrupted` for a live run whose process died. */
  status: RunStatus | 'interrupted';
  endReason: string | null;
  best: number | null;
  bestVsPeer: number | null;
  evaluations: { used: number; budget: number };
  costUsd: number;
  owner: string;
  /** Where it runs: the Slack thread, or the terminal process hosting it. */
  where: string;
  /** Why it is not advancing, when it waits for a gpu-worker. */
  waitingFor: string | null;
  createdAt: string;
}

const FILTERS = [...RUN_STATUSES, 'interrupted', 'live'] as const;

function parseStatuses(raw: string | undefined): Set<string> | null {
  if (!raw) return null;
  const wanted = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = wanted.filter((s) => !(FILTERS as readonly string[]).includes(s));
  if (bad.length > 0) throw new UserInputError(`--status ${bad.join(',')}: give one or more of ${FILTERS.join(', ')} (comma-separated).`, { code: 'runs_option' });
  return new Set(wanted);
}

function whereOf(view: RunView): string {
  if (view.slack) return `slack ${view.slack.channel}`;
  if (view.host) return view.interrupted ? `${view.host} (gone)` : view.host;
  return view.origin === 'terminal' ? 'terminal (not running)' : view.origin === 'api' ? 'serve' : view.origin;
}

export function listingOf(view: RunView): RunListing {
  return {
    id: view.id,
    task: view.task,
    status: view.interrupted ? 'interrupted' : view.status,
    endReason: view.endReason,
    best: view.best?.speedupVsBaseline ?? null,
    bestVsPeer: view.best?.speedupVsBestPeer ?? null,
    evaluations: view.evaluations,
    costUsd: Number(view.costUsd.used.toFixed(4)),
    owner: view.owner,
    where: whereOf(view),
    waitingFor: view.waitingForWorker,
    createdAt: view.createdAt,
  };
}

const x = (v: number | null) => (v == null ? '-' : `${v.toFixed(2)}x`);

export function registerRuns(program: Command, ctx: CliContext): void {
  program
    .command('runs')
    .description('List recent runs: task, status (interrupted: its process died), best, evaluations, cost, owner, where it runs')
    .option('--json', 'print the runs as JSON')
    .option('--status <list>', `only these statuses, comma-separated (${FILTERS.join(', ')})`)
    .option('--limit <n>', 'how many runs, newest first', '20')
    .action(async (opts: { json?: boolean; status?: string; limit: string }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit <= 0) throw new UserInputError(`--limit ${opts.limit}: give a whole number greater than 0.`, { code: 'runs_option' });
      const wanted = parseStatuses(opts.status);
      const config = configOf(ctx);
      const wantedRows = wanted ? 1000 : limit;
      // The embedded database's snapshot when it is current (src/db/run-snapshot.ts), else the database.
      let stored: Run[] | undefined = config.db.kind === 'pglite' ? await readRunSnapshot(config.db.dataDir, wantedRows) : undefined;
      if (!stored) {
        const { createStore, migrateIfNeeded, openDatabase } = await import('../../db/index.js');
        const handle = await openDatabase(config.db);
        try {
          await migrateIfNeeded(handle);
          stored = await createStore(handle.db).runs.list({ limit: wantedRows });
        } finally {
          await handle.close();
        }
      }
      const now = new Date();
      // Filter after describing: `interrupted` and `live` are not stored statuses.
      const rows = stored
        .slice(0, wantedRows)
        .map((r) => listingOf(describeRun(r, now)))
        .filter((r) => !wanted || wanted.has(r.status) || (wanted.has('live') && ['queued', 'running', 'waiting', 'paused', 'interrupted'].includes(r.status)))
        .slice(0, limit);
      if (!opts.json && rows.length === 0) {
        ctx.stdout.write(wanted ? `No runs with status ${[...wanted].join(', ')}.\n` : 'No runs yet; start one with `kernelseek run <task>`.\n');
        return;
      }
      writeRows(ctx.stdout, opts.json, rows, ['run', 'task', 'status', 'best', 'evals', 'cost', 'owner', 'where'], (r) => [
        r.id,
        r.task,
        r.waitingFor ? `${r.status}: ${r.waitingFor}` : r.endReason && r.status !== 'interrupted' ? `${r.status} (${r.endReason})` : r.status,
        x(r.best),
        `${r.evaluations.used}/${r.evaluations.budget}`,
        `$${r.costUsd.toFixed(2)}`,
        r.owner,
        r.where,
      ]);
    });
}
