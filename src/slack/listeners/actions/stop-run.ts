import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { AppError } from '../../../core/errors.js';
import { canControl } from '../../auth.js';
import type { SlackDeps } from '../../deps.js';
import { ACTION_IDS } from '../../views/action-ids.js';
import { readButtonClick, whisper } from './action-context.js';

/** *Stop* on a decision card (after Slack's confirmation dialog): the owner or an admin ends the run. */
export function registerStopRunAction(app: App, deps: SlackDeps): void {
  app.action<BlockAction<ButtonAction>>(ACTION_IDS.stopRun, async ({ ack, body, action }) => {
    await ack();
    const click = readButtonClick(body, action);
    try {
      const run = await deps.control.getStatus(click.value);
      const allowed = canControl(deps.slack, click.user, run);
      if (!allowed.ok) return whisper(deps, click, `:no_entry: ${allowed.reason}`);
      await deps.control.stopRun(click.value, { by: click.user });
      whisper(deps, click, `:octagonal_sign: Stopped ${click.value}; its summary follows in the thread.`);
    } catch (error) {
      if (error instanceof AppError) return whisper(deps, click, `:warning: ${error.userMessage}`);
      deps.logger.error({ err: error, runId: click.value }, 'stop button failed');
      whisper(deps, click, ':x: Something went wrong on our side; it has been logged.');
    }
  });
}
