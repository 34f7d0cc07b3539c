import type { App } from '@slack/bolt';
import { canAsk } from '../../auth.js';
import type { SlackDeps } from '../../deps.js';
import { loadRunFacts } from '../../run-facts.js';
import { runIdFromUrl, runPageUrl } from '../../views/links.js';
import { renderRunEntity, renderRunUnfurlBlocks } from '../../views/unfurl.js';

interface LinkShared {
  channel: string;
  user: string;
  message_ts: string;
  links: { domain: string; url: string }[];
}

/** Workspaces without Work Objects, learnt from their answer: plain unfurls from then on. */
const noWorkObjects = new WeakSet<SlackDeps>();

/**
 * A run's link (`KERNELSEEK_PUBLIC_URL/runs/<id>`, the manifest's unfurl domain) pasted in a channel
 * unfurls into the run's state: a Work Object (a `task` entity with a flexpane) where the workspace
 * takes them, plain blocks where it does not (Slack's refusal of the metadata says so; the plain
 * unfurl follows at once). The unfurl is visible to everyone in the channel, so it is made only for
 * an allowed user's link, and only for runs of channels KernelSeek is used in.
 */
export function registerLinkShared(app: App, deps: SlackDeps): void {
  app.event('link_shared', async ({ event }) => {
    const e = event as unknown as LinkShared;
    if (!canAsk(deps.slack, e.user).ok) return;
    const publicUrl = deps.slack.publicUrl;
    const entities: Record<string, unknown>[] = [];
    const unfurls: Record<string, { blocks: ReturnType<typeof renderRunUnfurlBlocks> }> = {};
    for (const link of e.links.slice(0, 5)) {
      const runId = runIdFromUrl(publicUrl, link.url);
      if (!runId) continue;
      const facts = await loadRunFacts(deps, runId);
      if (!facts) continue;
      const allowedChannels = deps.slack.allowedChannels;
      if (allowedChannels.length > 0 && (!facts.run.slack || !allowedChannels.includes(facts.run.slack.channel))) continue;
      entities.push(renderRunEntity(facts, { unfurlUrl: link.url, pageUrl: runPageUrl(publicUrl, runId)! }));
      unfurls[link.url] = { blocks: renderRunUnfurlBlocks(facts) };
    }
    if (entities.length === 0) return;
    if (!noWorkObjects.has(deps)) {
      const rich = await deps.poster.unfurl({ channel: e.channel, ts: e.message_ts, entities });
      if (rich.ok) return;
      deps.logger.info({ error: rich.error }, 'Work Objects not taken by this workspace; unfurling as plain blocks');
      noWorkObjects.add(deps);
    }
    await deps.poster.unfurl({ channel: e.channel, ts: e.message_ts, unfurls });
  });
}
