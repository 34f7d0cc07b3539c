import type { App } from '@slack/bolt';
import { AppError } from '../../../core/errors.js';
import type { SlackDeps } from '../../deps.js';
import { ANSWER_MODAL_ID } from '../../views/action-ids.js';
import { ANSWER_FIELD, type AnswerMetadata } from '../../views/answer-modal.js';
import { cardLabel } from '../../views/card-ids.js';
import { submitCardAnswer } from '../answers/submit-answer.js';

/**
 * The answer form of a decision card was sent: the question goes to that card, with its id. A card
 * that closed meanwhile refuses it in the form itself, next to the text, so nothing typed is lost
 * and the person reads which card is open now.
 */
export function registerAnswerSubmitted(app: App, deps: SlackDeps): void {
  app.view(ANSWER_MODAL_ID, async ({ ack, body, view }) => {
    const user = body.user.id;
    let meta: AnswerMetadata;
    try {
      meta = JSON.parse(view.private_metadata || '{}') as AnswerMetadata;
    } catch {
      return void (await ack({ response_action: 'errors', errors: { [ANSWER_FIELD]: 'This form is damaged; close it and press Reply… on the card again.' } }));
    }
    const text = String(view.state.values[ANSWER_FIELD]?.[ANSWER_FIELD]?.value ?? '').trim();
    if (!text) return void (await ack({ response_action: 'errors', errors: { [ANSWER_FIELD]: 'Write a question for the agent.' } }));
    try {
      const outcome = await submitCardAnswer(deps, { cardId: String(meta.cardId), channel: meta.channel, user, text, idempotencyKey: `form:${view.id}` });
      // Form errors are plain text: the mrkdwn of the thread's answer is reduced to words.
      if (outcome.kind !== 'taken') return void (await ack({ response_action: 'errors', errors: { [ANSWER_FIELD]: plain(outcome.message) } }));
      await ack();
      if (meta.channel && meta.threadTs) {
        void deps.poster.postEphemeral({ channel: meta.channel, user, threadTs: meta.threadTs, text: `:inbox_tray: Your answer to decision ${cardLabel(meta.cardId)} reaches the agent with it.` });
      }
    } catch (error) {
      const message = error instanceof AppError ? error.userMessage : 'Something went wrong on our side; it has been logged.';
      if (!(error instanceof AppError)) deps.logger.error({ err: error, card: meta.cardId }, 'answering a decision card from its form failed');
      await ack({ response_action: 'errors', errors: { [ANSWER_FIELD]: message.slice(0, 2000) } });
    }
  });
}

/** mrkdwn → plain words: links keep their label, mentions and emoji codes go. */
function plain(mrkdwn: string): string {
  return mrkdwn
    .replace(/<[^|>]+\|([^>]+)>/g, '$1')
    .replace(/<@[A-Z0-9]+>/g, 'someone')
    .replace(/:[a-z_]+: /g, '')
    .slice(0, 2000);
}
