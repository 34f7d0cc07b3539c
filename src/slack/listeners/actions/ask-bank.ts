import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { AppError } from '../../../core/errors.js';
import { canAsk } from '../../auth.js';
import type { SlackDeps } from '../../deps.js';
import { ACTION_IDS } from '../../views/action-ids.js';
import { cardFromBlockId } from '../../views/card-ids.js';
import { describeClosedCard } from '../answers/closed-card.js';
import { readButtonClick, whisper } from './action-context.js';

/** *Ask from the bank* on a decision card: the bank asks now instead of at the timeout (while that card is open). */
export function registerAskBankAction(app: App, deps: SlackDeps): void {
  app.action<BlockAction<ButtonAction>>(ACTION_IDS.askBank, async ({ ack, body, action }) => {
    await ack();
    const click = readButtonClick(body, action);
    const allowed = canAsk(deps.slack, click.user);
    if (!allowed.ok) return whisper(deps, click, `:no_entry: ${allowed.reason}`);
    // The button is on one card: once that card has closed it asks nothing of another.
    const cardId = cardFromBlockId(action.block_id);
    const card = cardId ? await deps.store.decisionCards.get(cardId) : undefined;
    if (card?.closedAt) return whisper(deps, click, `:lock: ${await describeClosedCard(deps, card.runId, card.id)}`);
    try {
      await deps.control.askFromBankNow(click.value);
      // The card's buttons give way when the question is delivered (the run's reporter owns the card).
      whisper(deps, click, ':books: The bank will ask the agent a question now; it follows in the thread.');
    } catch (error) {
      if (error instanceof AppError) return whisper(deps, click, `:warning: ${error.userMessage}`);
      deps.logger.error({ err: error, runId: click.value }, 'ask-from-the-bank failed');
      whisper(deps, click, ':x: Something went wrong on our side; it has been logged.');
    }
  });
}
