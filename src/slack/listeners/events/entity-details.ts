import type { App } from '@slack/bolt';
import { canAsk } from '../../auth.js';
import type { SlackDeps } from '../../deps.js';
import { loadRunFacts } from '../../run-facts.js';
import { runIdFromUrl, runPageUrl } from '../../views/links.js';
import { renderRunEntity } from '../../views/unfurl.js';

interface EntityDetailsRequested {
  user: string;
  trigger_id: string;
  entity_url: string;
  app_unfurl_url?: string;
  external_ref?: { id: string; type?: string };
  link?: { url: string };
}

/**
 * Someone opened a run's Work Object: its flexpane shows the run as it is now, with its evaluations
 * (entity.presentDetails, answered directly: the trigger_id is short-lived).
 */
export function registerEntityDetails(app: App, deps: SlackDeps): void {
  app.event('entity_details_requested', async ({ event, client }) => {
    const e = event as unknown as EntityDetailsRequested;
    const url = e.app_unfurl_url ?? e.link?.url ?? e.entity_url;
    const runId = e.external_ref?.type === 'kernelseek_run' ? e.external_ref.id : runIdFromUrl(deps.slack.publicUrl, url);
    const facts = runId && canAsk(deps.slack, e.user).ok ? await loadRunFacts(deps, runId) : undefined;
    if (!facts || !runId) {
      await client.entity.presentDetails({ trigger_id: e.trigger_id, error: { status: 'custom', custom_title: 'Run not found', custom_message: 'KernelSeek has no such run, or it is not shown to you.' } });
      return;
    }
    const metadata = renderRunEntity(facts, { unfurlUrl: url, pageUrl: runPageUrl(deps.slack.publicUrl, runId) ?? url }, true);
    await client.entity.presentDetails({ trigger_id: e.trigger_id, metadata: metadata as unknown as Parameters<typeof client.entity.presentDetails>[0]['metadata'] });
  });
}
