import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { SlackDeps } from '../../deps.js';
import { ACTION_IDS } from '../../views/action-ids.js';
import { renderPullRequestMessage } from '../../views/result-actions.js';
import { readButtonClick, whisper } from './action-context.js';
import { createInFlight, permalinkResolver, reportResultFailure, runForResultButton } from './result-context.js';

/**
 * *Open pull request* on a run's final card: the verified result on a new branch of the task's
 * repository (`upstream` in task.yaml), a pull request whose body is the evidence and names the
 * person who pressed the button; its link follows in the thread.
 */
export function registerOpenPullRequestAction(app: App, deps: SlackDeps): void {
  const inFlight = createInFlight();
  app.action<BlockAction<ButtonAction>>(ACTION_IDS.openPullRequest, async ({ ack, body, action, client }) => {
    await ack();
    const click = readButtonClick(body, action);
    const run = await runForResultButton(deps, click);
    if (!run) return;
    if (!inFlight.take(run.id)) return whisper(deps, click, `A pull request for ${run.id} is already being opened.`);
    try {
      whisper(deps, click, `:hourglass_flowing_sand: Opening a pull request for ${run.id}; its link follows in the thread.`);
      // The name people know them by, with the id that finds them in Slack.
      const info = await client.users.info({ user: click.user }).catch(() => undefined);
      const name = info?.user?.real_name || info?.user?.name;
      const requestedBy = name ? `${name} (Slack ${click.user})` : `Slack user ${click.user}`;
      const outcome = await deps.results!.openPullRequest(run.id, { requestedBy, link: permalinkResolver(client) });
      const view = renderPullRequestMessage(outcome, click.user);
      await deps.poster.postMessage({ channel: run.slackChannel, threadTs: run.slackThreadTs, text: view.text, blocks: view.blocks });
    } catch (error) {
      reportResultFailure(deps, click, error, 'open pull request');
    } finally {
      inFlight.release(run.id);
    }
  });
}
