import type { webApi } from '@slack/bolt';
import { AppError } from '../../../core/errors.js';
import type { Run } from '../../../db/index.js';
import { scrubPaths, type RunLinkResolver } from '../../../export/index.js';
import { canSee } from '../../auth.js';
import type { SlackDeps } from '../../deps.js';
import { whisper, type ButtonClick } from './action-context.js';

/**
 * What *Export* and *Open pull request* share: the run behind the button, seen only by whom may
 * see it (a run of another channel answers like a run that does not exist), the thread's permalink
 * for the evidence, and errors that never carry a server path into Slack.
 */
export async function runForResultButton(deps: SlackDeps, click: ButtonClick): Promise<(Run & { slackChannel: string; slackThreadTs: string }) | undefined> {
  if (!deps.results) {
    whisper(deps, click, 'Exporting results is not connected to this KernelSeek deployment.');
    return undefined;
  }
  const run = await deps.store.runs.get(click.value);
  if (!run || !run.slackChannel || !run.slackThreadTs || !click.channel || !canSee(deps.slack, click.user, click.channel, run.slackChannel)) {
    whisper(deps, click, `:warning: There is no run '${click.value}' in this channel.`);
    return undefined;
  }
  return run as Run & { slackChannel: string; slackThreadTs: string };
}

export function permalinkResolver(client: webApi.WebClient): RunLinkResolver {
  return async (run) => {
    if (!run.slackChannel || !run.slackThreadTs) return null;
    const answer = await client.chat.getPermalink({ channel: run.slackChannel, message_ts: run.slackThreadTs });
    return typeof answer.permalink === 'string' ? answer.permalink : null;
  };
}

/** A failure as the person who pressed the button sees it: what went wrong, with no path of ours in it. */
export function reportResultFailure(deps: SlackDeps, click: ButtonClick, error: unknown, what: string): void {
  if (error instanceof AppError) return whisper(deps, click, `:warning: ${scrubPaths(error.userMessage)}`);
  deps.logger.error({ err: error, runId: click.value }, `${what} failed`);
  whisper(deps, click, ':x: Something went wrong on our side; it has been logged.');
}

/** Runs whose button is being handled in this process: a second press waits for the first. */
export function createInFlight() {
  const busy = new Set<string>();
  return {
    take: (key: string) => (busy.has(key) ? false : (busy.add(key), true)),
    release: (key: string) => void busy.delete(key),
  };
}
