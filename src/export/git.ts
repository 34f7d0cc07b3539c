import { execa } from 'execa';
import { AppError } from '../core/errors.js';
import { redactString } from '../core/redact.js';

/**
 * Running git for export and `pr`. Every call goes through one function so that what reaches
 * git's argv is in one place (never a token: credentials travel in the environment, which only
 * this user can read) and so tests can watch the argv while real git runs.
 */
export interface GitCall {
  args: string[];
  cwd: string;
  env: Record<string, string>;
  input?: string;
}

export interface GitOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export type GitRunner = (call: GitCall) => Promise<GitOutput>;

/** Real git, with exactly the environment given (nothing inherited). */
export const runGit: GitRunner = async (call) => {
  const r = await execa('git', call.args, {
    cwd: call.cwd,
    env: call.env,
    extendEnv: false,
    reject: false,
    ...(call.input !== undefined ? { input: call.input } : { stdin: 'ignore' }),
    stripFinalNewline: false,
    maxBuffer: 64 * 2 ** 20,
  });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
};

/** Git failed where the person must act (a repository that cannot be reached, a refused push). */
export class GitError extends AppError {
  readonly stderr: string;
  constructor(what: string, stderr: string, options: { code?: string; hide?: string[] } = {}) {
    const detail = cleanGitMessage(stderr, options.hide ?? []);
    super(options.code ?? 'git_failed', `${what}: ${detail}`);
    this.stderr = detail;
  }
}

/**
 * Git's own words, fit to show: the last lines that say something, credentials redacted by value
 * and by shape, and the given strings (temporary folders, the data directory) replaced.
 */
export function cleanGitMessage(stderr: string, hide: string[], secrets: string[] = []): string {
  let text = redactString(stderr, secrets);
  for (const h of hide.filter((x) => x.length > 1).sort((a, b) => b.length - a.length)) text = text.split(h).join('…');
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('hint:'));
  return lines.slice(-4).join(' ').slice(0, 600) || 'git gave no reason';
}

/**
 * A repository's address fit to show (a terminal, Slack, an error): a URL's password, and a user
 * that looks like a token, left out. Git takes the address as given; only what is shown changes.
 */
export function displayRepo(repo: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(repo)) return repo;
  try {
    const url = new URL(repo);
    if (!url.password && url.username.length < 20) return repo;
    url.password = '';
    if (url.username.length >= 20) url.username = '';
    return url.toString();
  } catch {
    return repo;
  }
}

/** Git with no configuration but the repository's own: for work on KernelSeek's temporary folders. */
export function isolatedGitEnv(pathEnv: string | undefined, home: string): Record<string, string> {
  return {
    PATH: pathEnv ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
  };
}
