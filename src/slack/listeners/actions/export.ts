import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { SlackDeps } from '../../deps.js';
import { ACTION_IDS } from '../../views/action-ids.js';
import { renderExportComment } from '../../views/result-actions.js';
import { readButtonClick, whisper } from './action-context.js';
import { createInFlight, permalinkResolver, reportResultFailure, runForResultButton } from './result-context.js';

/** *Export* on a run's final card: the evidence (Markdown) and the diff against the baseline, as files in the thread. */
export function registerExportAction(app: App, deps: SlackDeps): void {
  const inFlight = createInFlight();
  app.action<BlockAction<ButtonAction>>(ACTION_IDS.exportResult, async ({ ack, body, action, client }) => {
    await ack();
    const click = readButtonClick(body, action);
    const run = await runForResultButton(deps, click);
    if (!run) return;
    if (!inFlight.take(`export:${run.id}`)) return whisper(deps, click, `The export of ${run.id} is already on its way.`);
    try {
      const exported = await deps.results!.exportFiles(run.id, { link: permalinkResolver(client) });
      const comment = renderExportComment(run.id, exported.seq, click.user, exported.standing);
      await Promise.all(
        exported.files.map((file, i) =>
          deps.poster.uploadFile({ channel: run.slackChannel, threadTs: run.slackThreadTs, filename: file.filename, content: file.content, title: file.title, ...(i === 0 ? { initialComment: comment } : {}) }),
        ),
      );
    } catch (error) {
      reportResultFailure(deps, click, error, 'export');
    } finally {
      inFlight.release(`export:${run.id}`);
    }
  });
}
