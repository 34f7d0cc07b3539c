import { AppError, ConfigError, UserInputError } from '../core/errors.js';

/**
 * The GitHub REST API, as `pr` uses it: one call, `POST /repos/{owner}/{repo}/pulls`. Plain fetch
 * against a configurable base URL (GITHUB_API_URL: GitHub Enterprise's `https://host/api/v3`, or a
 * local server in tests); the token goes in the Authorization header and nowhere else.
 */
export interface GitHubRepo {
  /** The web host (`github.com`, or an Enterprise host). */
  host: string;
  owner: string;
  name: string;
}

const NAME = /^[A-Za-z0-9_.-]+$/;

/**
 * The GitHub repository a git remote names, or null when it is not on GitHub: `https://host/o/r(.git)`,
 * `ssh://git@host/o/r(.git)`, `git@host:o/r(.git)`, where host is github.com or the host of
 * GITHUB_API_URL (an Enterprise server).
 */
export function parseGitHubRemote(remote: string, apiUrl: string): GitHubRepo | null {
  const hosts = new Set(['github.com', 'www.github.com']);
  try {
    const api = new URL(apiUrl).hostname;
    if (api !== 'api.github.com') hosts.add(api);
  } catch {
    // a bad GITHUB_API_URL is refused by the configuration before it gets here
  }
  let host: string;
  let rest: string;
  const scp = /^(?:[A-Za-z0-9._-]+@)?([A-Za-z0-9.-]+):(?!\/\/)(.+)$/.exec(remote);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(remote)) {
    let url: URL;
    try {
      url = new URL(remote);
    } catch {
      return null;
    }
    if (!['https:', 'http:', 'ssh:', 'git:'].includes(url.protocol)) return null;
    host = url.hostname;
    rest = url.pathname.replace(/^\/+/, '');
  } else if (scp) {
    host = scp[1]!;
    rest = scp[2]!;
  } else {
    return null;
  }
  if (!hosts.has(host.toLowerCase())) return null;
  const [owner, repo, ...extra] = rest.replace(/\/+$/, '').replace(/\.git$/, '').split('/');
  if (!owner || !repo || extra.length > 0 || !NAME.test(owner) || !NAME.test(repo)) return null;
  return { host: host.toLowerCase() === 'www.github.com' ? 'github.com' : host.toLowerCase(), owner, name: repo };
}

/** The page where a person opens the pull request by hand (no token, or the API refused). */
export function compareUrl(repo: GitHubRepo, base: string, head: string): string {
  return `https://${repo.host}/${repo.owner}/${repo.name}/compare/${encodeURIComponent(base)}...${encodeURIComponent(head)}?expand=1`;
}

export interface PullRequestInput {
  apiUrl: string;
  token: string;
  repo: GitHubRepo;
  title: string;
  head: string;
  base: string;
  body: string;
  draft?: boolean;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export interface OpenedPullRequest {
  number: number;
  url: string;
}

/** GitHub refused the request for a reason the person can fix (permissions, an existing request). */
export class GitHubError extends AppError {
  readonly status: number;
  constructor(status: number, message: string) {
    super('github_refused', message);
    this.status = status;
  }
}

/** GitHub's own words from an error response: its message and each validation error's. */
function reasonOf(body: unknown): string {
  const b = body as { message?: unknown; errors?: { message?: unknown; code?: unknown; field?: unknown }[] } | null;
  const parts = [typeof b?.message === 'string' ? b.message : ''];
  for (const e of Array.isArray(b?.errors) ? b.errors : []) {
    parts.push(typeof e.message === 'string' ? e.message : [e.field, e.code].filter((v) => typeof v === 'string').join(' '));
  }
  return parts.filter(Boolean).join('; ').slice(0, 400) || 'no reason given';
}

/** Opens a pull request; throws GitHubError (safe to show) when GitHub refuses. */
export async function createPullRequest(input: PullRequestInput): Promise<OpenedPullRequest> {
  const doFetch = input.fetch ?? fetch;
  const url = `${input.apiUrl.replace(/\/+$/, '')}/repos/${encodeURIComponent(input.repo.owner)}/${encodeURIComponent(input.repo.name)}/pulls`;
  let response: Response;
  try {
    response = await doFetch(url, {
      method: 'POST',
      headers: {
        accept: 'application/vnd.github+json',
        authorization: `Bearer ${input.token}`,
        'content-type': 'application/json',
        'user-agent': 'kernelseek',
        'x-github-api-version': '2022-11-28',
      },
      body: JSON.stringify({ title: input.title, head: input.head, base: input.base, body: input.body, draft: input.draft ?? false, maintainer_can_modify: true }),
      signal: AbortSignal.timeout(input.timeoutMs ?? 30_000),
    });
  } catch (error) {
    throw new AppError('github_unreachable', `GitHub's API at ${input.apiUrl} could not be reached (${(error as Error).message}); check GITHUB_API_URL and the network.`);
  }
  const body = (await response.json().catch(() => null)) as { number?: unknown; html_url?: unknown } | null;
  if (response.status === 201 && typeof body?.number === 'number' && typeof body.html_url === 'string') return { number: body.number, url: body.html_url };
  const reason = reasonOf(body);
  const where = `${input.repo.owner}/${input.repo.name}`;
  if (response.status === 401) throw new ConfigError([`GITHUB_TOKEN: GitHub refused it (401: ${reason}); give a token that is valid for ${where}`]);
  if (response.status === 403 || response.status === 404) {
    throw new GitHubError(response.status, `GitHub answered ${response.status} (${reason}): the token cannot open pull requests on ${where}. It needs the "Pull requests: write" permission (and "Contents: read") on that repository.`);
  }
  if (response.status === 422) throw new GitHubError(422, `GitHub did not open the pull request on ${where} (${reason}).`);
  if (response.status === 201) throw new UserInputError(`GitHub answered 201 without a pull request's number and address; is GITHUB_API_URL (${input.apiUrl}) GitHub's REST API?`, { code: 'github_bad_answer' });
  throw new GitHubError(response.status, `GitHub answered ${response.status} (${reason}) to opening the pull request on ${where}; try again later.`);
}
