import type { App } from '@slack/bolt';
import { canPromote } from '../../auth.js';
import type { SlackDeps } from '../../deps.js';
import { ACTION_IDS, PROMOTE_REACTIONS } from '../../views/action-ids.js';
import { section } from '../../views/format.js';

/**
 * A :bank: or :star: reaction on a person's reply that was asked as a question offers to add it to
 * the bank. A reaction brings no trigger_id (a form cannot be opened from it), so the reactor gets a
 * private note with the button that opens the form.
 */
export function registerReactionAdded(app: App, deps: SlackDeps): void {
  app.event('reaction_added', async ({ event }) => {
    if (event.item.type !== 'message' || !(PROMOTE_REACTIONS as readonly string[]).includes(event.reaction)) return;
    const { channel, ts } = event.item;
    const question = await deps.store.questionLookup.findByExternalId(`${channel}:${ts}`);
    if (!question) return;
    const run = await deps.store.runs.get(question.runId);
    const threadTs = run?.slackThreadTs ?? undefined;
    const allowed = canPromote(deps.slack, event.user);
    if (!allowed.ok) {
      void deps.poster.postEphemeral({ channel, user: event.user, ...(threadTs ? { threadTs } : {}), text: `:no_entry: ${allowed.reason}` });
      return;
    }
    const text = `Add question ${question.id} to the question bank? You choose its kind and the decision points it fits.`;
    void deps.poster.postEphemeral({
      channel,
      user: event.user,
      ...(threadTs ? { threadTs } : {}),
      text,
      blocks: [
        section(text),
        {
          type: 'actions',
          elements: [
            { type: 'button', action_id: ACTION_IDS.promoteQuestion, style: 'primary', text: { type: 'plain_text', text: 'Add to the question bank' }, value: `${question.runId}:${question.id}` },
          ],
        },
      ],
    });
  });
}
