import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execa } from 'execa';

/**
 * A local HTTP server that answers like api.github.com's `POST /repos/{owner}/{repo}/pulls`, behind
 * GITHUB_API_URL. Every request is recorded (method, path, headers, parsed body). It checks what
 * GitHub checks: a bearer token, a JSON body with title, head and base, a repository it knows, and
 * that `head` is a branch that exists on that repository (a real bare git repository, read with
 * git) — so a test passes only when the branch was really pushed. A second request for the same
 * head is refused as GitHub refuses it. `failNext` scripts a refusal.
 */
export interface RecordedGitHubRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown> | null;
  status: number;
}

export interface FakeGitHub {
  /** Pass as GITHUB_API_URL. */
  url: string;
  requests: RecordedGitHubRequest[];
  /** Pull requests opened, by number. */
  pulls: { number: number; owner: string; repo: string; title: string; head: string; base: string; body: string; draft: boolean }[];
  /** The next request is answered with this status and body. */
  failNext(status: number, body: Record<string, unknown>): void;
  close(): Promise<void>;
}

export interface FakeGitHubOptions {
  /** `owner/name` → the bare repository that stands for it. */
  repos: Record<string, string>;
  /** The only token accepted. */
  token: string;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | null> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}

export async function startFakeGitHub(options: FakeGitHubOptions): Promise<FakeGitHub> {
  const requests: RecordedGitHubRequest[] = [];
  const pulls: FakeGitHub['pulls'] = [];
  let scripted: { status: number; body: Record<string, unknown> } | undefined;
  const server: Server = createServer(async (req, res) => {
    const body = await readJson(req);
    const url = new URL(req.url ?? '/', 'http://localhost');
    const answer = (status: number, payload: Record<string, unknown>) => {
      requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, body, status });
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-github-media-type': 'github.v3; format=json' });
      res.end(JSON.stringify(payload));
    };
    const docs = 'https://docs.github.com/rest/pulls/pulls#create-a-pull-request';
    if (req.headers.authorization !== `Bearer ${options.token}`) return answer(401, { message: 'Bad credentials', documentation_url: docs });
    const m = /^\/repos\/([^/]+)\/([^/]+)\/pulls$/.exec(url.pathname);
    if (req.method !== 'POST' || !m) return answer(404, { message: 'Not Found', documentation_url: docs });
    const key = `${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}`;
    const bare = options.repos[key];
    if (!bare) return answer(404, { message: 'Not Found', documentation_url: docs });
    if (scripted) {
      const s = scripted;
      scripted = undefined;
      return answer(s.status, s.body);
    }
    if (!body || typeof body.title !== 'string' || typeof body.head !== 'string' || typeof body.base !== 'string') {
      return answer(422, { message: 'Validation Failed', errors: [{ resource: 'PullRequest', code: 'missing_field', field: 'head' }], documentation_url: docs });
    }
    const branches = (await execa('git', ['--git-dir', bare, 'for-each-ref', '--format=%(refname:short)', 'refs/heads'])).stdout.split('\n');
    if (!branches.includes(body.head)) return answer(422, { message: 'Validation Failed', errors: [{ resource: 'PullRequest', field: 'head', code: 'invalid' }], documentation_url: docs });
    if (!branches.includes(body.base)) return answer(422, { message: 'Validation Failed', errors: [{ resource: 'PullRequest', field: 'base', code: 'invalid' }], documentation_url: docs });
    if (pulls.some((p) => `${p.owner}/${p.repo}` === key && p.head === body.head)) {
      return answer(422, { message: 'Validation Failed', errors: [{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${key.split('/')[0]}:${body.head}.` }], documentation_url: docs });
    }
    const number = pulls.length + 1;
    const [owner, repo] = key.split('/') as [string, string];
    pulls.push({ number, owner, repo, title: body.title, head: body.head, base: body.base, body: typeof body.body === 'string' ? body.body : '', draft: body.draft === true });
    return answer(201, {
      id: 1000 + number,
      number,
      state: 'open',
      title: body.title,
      body: body.body ?? null,
      draft: body.draft === true,
      html_url: `https://github.com/${key}/pull/${number}`,
      url: `https://api.github.com/repos/${key}/pulls/${number}`,
      head: { ref: body.head },
      base: { ref: body.base },
      user: { login: 'kernelseek-bot' },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    pulls,
    failNext(status, body) {
      scripted = { status, body };
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
