import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { canPromote } from '../../auth.js';
import type { SlackDeps } from '../../deps.js';
import { ACTION_IDS } from '../../views/action-ids.js';
import { renderPromoteModal } from '../../views/promote-modal.js';
import { readButtonClick, whisper } from './action-context.js';

/**
 * *Add to the question bank* (on a "question asked" message, or on the note a :bank: reaction
 * brings): opens a form asking which kind of question it is and which decision points it fits — the
 * bank needs both, and only a person can say.
 */
export function registerPromoteQuestionAction(app: App, deps: SlackDeps): void {
  app.action<BlockAction<ButtonAction>>(ACTION_IDS.promoteQuestion, async ({ ack, body, action, client }) => {
    await ack();
    const click = readButtonClick(body, action);
    const allowed = canPromote(deps.slack, click.user);
    if (!allowed.ok) return whisper(deps, click, `:no_entry: ${allowed.reason}`);
    if (!deps.bank) return whisper(deps, click, 'The question bank is not connected to this KernelSeek deployment.');
    const [runId, id] = click.value.split(':');
    const question = await deps.store.questions.get(Number(id));
    if (!question || question.runId !== runId || question.source !== 'human') {
      return whisper(deps, click, `:warning: Question ${id ?? '?'} of ${runId ?? '?'} was not found; it may have been deleted with its run.`);
    }
    const run = await deps.store.runs.get(question.runId);
    const meta = {
      runId: question.runId,
      questionId: question.id,
      channel: run?.slackChannel ?? click.channel ?? '',
      threadTs: run?.slackThreadTs ?? click.threadTs ?? '',
    };
    // A trigger_id lives for 3 seconds: the form is opened directly, not through the paced poster.
    await client.views.open({ trigger_id: click.triggerId, view: renderPromoteModal(question, meta) });
  });
}
