import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { AppError } from '../../../core/errors.js';
import { canAsk } from '../../auth.js';
import type { SlackDeps } from '../../deps.js';
import { ACTION_IDS } from '../../views/action-ids.js';
import { readButtonClick, resolveButtons, whisper } from './action-context.js';

/** *Ask from the bank* on a decision card: the bank asks now instead of at the timeout. */
export function registerAskBankAction(app: App, deps: SlackDeps): void {
  app.action<BlockAction<ButtonAction>>(ACTION_IDS.askBank, async ({ ack, body, action }) => {
    await ack();
    const click = readButtonClick(body, action);
    const allowed = canAsk(deps.slack, click.user);
    if (!allowed.ok) return whisper(deps, click, `:no_entry: ${allowed.reason}`);
    try {
      await deps.control.askFromBankNow(click.value);
      resolveButtons(deps, click, `:books: <@${click.user}> asked the bank for a question.`, 'Decision point: the bank was asked.');
    } catch (error) {
      if (error instanceof AppError) return whisper(deps, click, `:warning: ${error.userMessage}`);
      deps.logger.error({ err: error, runId: click.value }, 'ask-from-the-bank failed');
      whisper(deps, click, ':x: Something went wrong on our side; it has been logged.');
    }
  });
}
