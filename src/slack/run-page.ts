import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../core/logger.js';
import type { Store } from '../db/index.js';
import type { SlackDirectory } from './directory.js';
import type { ReceiverRoute } from './receiver/signed-receiver.js';

export const RUN_PAGE_PREFIX = '/runs/';
const RUN_ID = /^[a-z0-9][a-z0-9-]{2,63}$/;

/**
 * `GET /runs/<id>`: where a run's public link (`KERNELSEEK_PUBLIC_URL/runs/<id>`) goes when clicked —
 * a redirect to the run's thread in Slack, which only the workspace's members can open. Pasted in
 * Slack, the same link unfurls (link_shared). Nothing else is served: no run data without Slack.
 */
export function createRunPageRoute(deps: { store: Pick<Store, 'runs'>; directory: SlackDirectory | undefined; logger: Logger }): ReceiverRoute {
  const answer = (res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers });
    res.end(text);
  };
  return {
    path: RUN_PAGE_PREFIX,
    method: ['GET', 'HEAD'],
    prefix: true,
    handler: (req: IncomingMessage, res: ServerResponse) => {
      const id = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname.slice(RUN_PAGE_PREFIX.length)).replace(/\/+$/, '');
      if (!RUN_ID.test(id)) return answer(res, 404, 'Not a KernelSeek run.\n');
      void (async () => {
        const run = await deps.store.runs.get(id);
        const url = run?.slackChannel && run.slackThreadTs && deps.directory ? await deps.directory.permalink(run.slackChannel, run.slackThreadTs) : undefined;
        if (!run) return answer(res, 404, 'Not a KernelSeek run.\n');
        if (!url) return answer(res, 404, `Run ${run.id} has no Slack thread to show.\n`);
        answer(res, 302, `See ${url}\n`, { location: url });
      })().catch((error: unknown) => {
        deps.logger.warn({ err: error, id }, 'run page failed');
        answer(res, 503, 'Try again in a minute.\n');
      });
    },
  };
}
