import type { App } from '@slack/bolt';
import { AppError } from '../../../core/errors.js';
import { canPromote } from '../../auth.js';
import type { SlackDeps } from '../../deps.js';
import { section } from '../../views/format.js';
import { PROMOTE_FIELDS, PROMOTE_MODAL_ID, type PromoteMetadata } from '../../views/promote-modal.js';

/**
 * The "Add to the bank" form was submitted: the bank checks the question (a bank question never
 * names a technique) and adds it; a refusal is shown in the form, next to the field, so the person
 * can fix it without losing what they chose.
 */
export function registerPromoteQuestionSubmitted(app: App, deps: SlackDeps): void {
  app.view(PROMOTE_MODAL_ID, async ({ ack, body, view }) => {
    const user = body.user.id;
    const meta = JSON.parse(view.private_metadata || '{}') as PromoteMetadata;
    const values = view.state.values;
    const kind = values[PROMOTE_FIELDS.kind]?.[PROMOTE_FIELDS.kind]?.selected_option?.value;
    const triggers = (values[PROMOTE_FIELDS.triggers]?.[PROMOTE_FIELDS.triggers]?.selected_options ?? []).map((o) => o.value);
    const errors: Record<string, string> = {};
    if (kind !== 'layer_shift' && kind !== 'limit_rejection') errors[PROMOTE_FIELDS.kind] = 'Choose what the question does.';
    if (triggers.length === 0) errors[PROMOTE_FIELDS.triggers] = 'Choose at least one decision point.';
    if (Object.keys(errors).length > 0) return void (await ack({ response_action: 'errors', errors }));
    const allowed = canPromote(deps.slack, user);
    if (!allowed.ok) return void (await ack({ response_action: 'errors', errors: { [PROMOTE_FIELDS.kind]: allowed.reason } }));
    if (!deps.bank) return void (await ack({ response_action: 'errors', errors: { [PROMOTE_FIELDS.kind]: 'The question bank is not connected to this deployment.' } }));
    let entry: { id: string };
    try {
      entry = await deps.bank.promote(meta.questionId, { kind: kind as 'layer_shift' | 'limit_rejection', triggers, by: user });
    } catch (error) {
      const message = error instanceof AppError ? error.userMessage : 'Something went wrong on our side; it has been logged.';
      if (!(error instanceof AppError)) deps.logger.error({ err: error, questionId: meta.questionId }, 'promoting a question failed');
      return void (await ack({ response_action: 'errors', errors: { [PROMOTE_FIELDS.kind]: message.slice(0, 2000) } }));
    }
    await ack();
    if (meta.channel && meta.threadTs) {
      const text = `:books: <@${user}> added question ${meta.questionId} to the bank as \`${entry.id}\` (${String(kind).replace('_', ' ')}; ${triggers.join(', ')}).`;
      void deps.poster.postMessage({ channel: meta.channel, threadTs: meta.threadTs, text, blocks: [section(text)] });
    }
  });
}
