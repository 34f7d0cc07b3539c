import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { AppError } from '../../../core/errors.js';
import { canAsk } from '../../auth.js';
import type { SlackDeps } from '../../deps.js';
import { ACTION_IDS } from '../../views/action-ids.js';
import { renderAnswerModal } from '../../views/answer-modal.js';
import { cardLabel, parseCardId } from '../../views/card-ids.js';
import { findChoice } from '../../views/decision-choices.js';
import { describeClosedCard } from '../answers/closed-card.js';
import { submitCardAnswer } from '../answers/submit-answer.js';
import { readButtonClick, whisper } from './action-context.js';

/**
 * A decision card's own answers: a button for each offered choice (its question reaches the agent
 * as the presser's answer to that card), and *Reply…*, which opens a form bound to the card.
 */
export function registerAnswerCardActions(app: App, deps: SlackDeps): void {
  app.action<BlockAction<ButtonAction>>(new RegExp(`^${ACTION_IDS.answerChoice}(:|$)`), async ({ ack, body, action }) => {
    await ack();
    const click = readButtonClick(body, action);
    const sep = click.value.lastIndexOf(':');
    const cardId = click.value.slice(0, sep);
    const card = sep > 0 ? await deps.store.decisionCards.get(cardId) : undefined;
    const choice = card ? findChoice(card.trigger, click.value.slice(sep + 1)) : undefined;
    if (!card || !choice) return whisper(deps, click, ':warning: That choice is not one this card offers.');
    try {
      // One question per card and choice, however many times (and by whom) it is pressed.
      const outcome = await submitCardAnswer(deps, { cardId, channel: click.channel, user: click.user, text: choice.text, idempotencyKey: `choice:${cardId}:${choice.id}` });
      if (outcome.kind === 'refused') return whisper(deps, click, outcome.message);
      if (outcome.kind === 'closed') return whisper(deps, click, `:lock: ${outcome.message}`);
      whisper(deps, click, outcome.created ? `:inbox_tray: Asked the agent, answering decision ${cardLabel(cardId)}: “${choice.text}”` : `That choice was already asked for decision ${cardLabel(cardId)}.`);
    } catch (error) {
      if (error instanceof AppError) return whisper(deps, click, `:warning: ${error.userMessage}`);
      deps.logger.error({ err: error, card: cardId }, 'answering a decision card failed');
      whisper(deps, click, ':x: Something went wrong on our side; it has been logged.');
    }
  });

  app.action<BlockAction<ButtonAction>>(ACTION_IDS.answerReply, async ({ ack, body, action, client }) => {
    await ack();
    const click = readButtonClick(body, action);
    const allowed = canAsk(deps.slack, click.user);
    if (!allowed.ok) return whisper(deps, click, `:no_entry: ${allowed.reason}`);
    const parsed = parseCardId(click.value);
    const card = parsed ? await deps.store.decisionCards.get(click.value) : undefined;
    const run = parsed ? await deps.store.runs.get(parsed.runId) : undefined;
    if (!card || !run?.slackChannel || !run.slackThreadTs || (click.channel && click.channel !== run.slackChannel)) {
      return whisper(deps, click, ':warning: That decision card is not one of a run in this channel.');
    }
    // A closed card opens no form: the person learns at once which one is open.
    if (card.closedAt) return whisper(deps, click, `:lock: ${await describeClosedCard(deps, run.id, card.id)}`);
    // A trigger_id lives for 3 seconds: the form is opened directly, not through the paced poster.
    await client.views.open({ trigger_id: click.triggerId, view: renderAnswerModal(card, { cardId: card.id, channel: run.slackChannel, threadTs: run.slackThreadTs }) });
  });
}
