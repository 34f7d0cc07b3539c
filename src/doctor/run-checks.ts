import path from 'node:path';
import { inspectConfig, REPO_ROOT, type Config, type Env } from '../config/index.js';
import { ConfigError } from '../core/errors.js';
import { checkCompiler, checkDisk, checkGit, checkHarness, checkSandbox, checkTasks } from './host.js';
import { checkSettings } from './settings.js';
import { checkModel, checkRedisServer, checkSlack, checkStore } from './services.js';
import type { Check, CheckContext, CheckLine, Part } from './types.js';
import { checkWorkerHost } from './worker-host.js';

export interface RunChecksOptions {
  env: Env;
  cwd: string;
  parts: Part[];
  arch?: string;
  gpus?: number[];
  checkModel?: boolean;
  atStart?: boolean;
  nvidiaSmi?: string;
}

export interface CheckReport {
  lines: CheckLine[];
  /** The configuration, when the environment gives a valid one (no config line failed). */
  config: Config | undefined;
  failed: boolean;
}

/** Which checks each part needs, in the order the report shows them. */
function checksFor(parts: Set<Part>): Check[] {
  const server = parts.has('slack') || parts.has('agent') || parts.has('scheduler');
  const checks: Check[] = [checkSettings, checkRedisServer];
  if (server) checks.push(checkStore);
  if (parts.has('slack') || parts.has('scheduler')) checks.push(checkSlack);
  if (parts.has('agent')) checks.push(checkModel, checkGit);
  if (parts.has('worker')) checks.push(checkWorkerHost, checkCompiler);
  if (parts.has('agent') || parts.has('worker')) checks.push(checkSandbox);
  checks.push(checkHarness);
  if (parts.has('agent') || parts.has('slack') || parts.has('worker')) checks.push(checkTasks);
  checks.push(checkDisk);
  return checks;
}

/**
 * Runs every check a process of these parts needs and returns all their lines: nothing stops at
 * the first problem. Checks run one after another (each is quick; the GPU host's Python probe is
 * the slowest), so the report reads in a fixed order.
 */
export async function runChecks(options: RunChecksOptions): Promise<CheckReport> {
  const { config, problems } = inspectConfig(options.env, { cwd: options.cwd });
  const parts = new Set(options.parts);
  const ctx: CheckContext = {
    env: options.env,
    parts,
    config,
    problems,
    ...(options.arch !== undefined ? { arch: options.arch } : {}),
    ...(options.gpus ? { gpus: options.gpus } : {}),
    checkModel: options.checkModel ?? false,
    atStart: options.atStart ?? false,
    manifestPath: path.join(config?.core.repoRoot ?? REPO_ROOT, 'slack', 'manifest.yaml'),
    ...(options.nvidiaSmi ? { nvidiaSmi: options.nvidiaSmi } : {}),
  };
  const lines: CheckLine[] = [];
  for (const check of checksFor(parts)) {
    try {
      lines.push(...(await check(ctx)));
    } catch (error) {
      lines.push({ status: 'fail', name: check.name.replace(/^check/, '').toLowerCase() || 'check', detail: `the check itself failed: ${(error as Error).message}` });
    }
  }
  if (!config) lines.push({ status: 'fail', name: 'configuration', detail: 'with these variables no other check can run', fix: 'fix the variables above first' });
  const failed = lines.some((l) => l.status === 'fail');
  return { lines, config: failed ? undefined : config, failed };
}

const MARK = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;

/** The report as `kernelseek doctor` prints it: one line per finding, the fix under each warn and fail. */
export function formatReport(lines: CheckLine[]): string {
  const out: string[] = [];
  for (const l of lines) {
    out.push(`${MARK[l.status]}  ${l.name}: ${l.detail}`);
    if (l.fix && l.status !== 'ok') out.push(`      fix: ${l.fix}`);
  }
  const count = (s: CheckLine['status']) => lines.filter((l) => l.status === s).length;
  out.push(`${count('ok')} ok, ${count('warn')} warning(s), ${count('fail')} problem(s)`);
  return out.join('\n');
}

/**
 * A service that refuses to start: every problem its start-up checks found, with their fixes, then
 * the warnings. The exit status is 78 (configuration), as for an invalid variable.
 */
export class StartRefusedError extends ConfigError {
  constructor(command: string, doctorRole: string, lines: CheckLine[]) {
    const fails = lines.filter((l) => l.status === 'fail');
    const warns = lines.filter((l) => l.status === 'warn');
    const body: string[] = [`${command} cannot start: ${fails.length} problem${fails.length === 1 ? '' : 's'}:`];
    for (const l of fails) {
      body.push(`  - ${l.name}: ${l.detail}`);
      if (l.fix) body.push(`      fix: ${l.fix}`);
    }
    if (warns.length) body.push('and warnings:', ...warns.map((l) => `  - ${l.name}: ${l.detail}`));
    super(
      fails.map((l) => `${l.name}: ${l.detail}`),
      { message: body.join('\n'), fix: `Fix the problems above and start it again (\`kernelseek doctor --role ${doctorRole}\` shows every check; README.md lists the variables).` },
    );
  }
}

/** For serve and gpu-worker: runs the checks, logs the warnings, refuses with the whole list when one fails. */
export async function checkBeforeStart(command: string, doctorRole: string, options: RunChecksOptions, warn: (line: CheckLine) => void): Promise<Config> {
  const report = await runChecks({ ...options, atStart: true });
  if (report.failed || !report.config) throw new StartRefusedError(command, doctorRole, report.lines);
  for (const l of report.lines) if (l.status === 'warn') warn(l);
  return report.config;
}
