import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { AppError } from '../../../core/errors.js';
import type { SlackDeps } from '../../deps.js';
import { ACTION_IDS } from '../../views/action-ids.js';
import { runLink } from '../../views/links.js';
import { startContinuation } from '../commands/continue.js';
import type { WorkQueue } from '../work-queue.js';
import { readButtonClick, whisper } from './action-context.js';

/**
 * *Continue from best* on a run's final card: a new run of the same task, in the same channel,
 * starts from this run's best kernel with its history summarised (as `/kernelseek continue`).
 */
export function registerContinueRunAction(app: App, deps: SlackDeps, heavy: WorkQueue): void {
  app.action<BlockAction<ButtonAction>>(ACTION_IDS.continueRun, async ({ ack, body, action }) => {
    await ack();
    const click = readButtonClick(body, action);
    // Starting a run is the heavy work: it queues behind other starts, after the ack.
    void heavy.run(async () => {
      try {
        const parent = await deps.control.getStatus(click.value);
        if (!click.channel || parent.slack?.channel !== click.channel) return whisper(deps, click, ':warning: That run is not one of this channel.');
        const started = await startContinuation(deps, { parent, channel: click.channel, user: click.user, fork: false, options: { auto: parent.autonomous } });
        if (!started.ok) return whisper(deps, click, started.reason);
        whisper(deps, click, `:rocket: Started ${await runLink(deps.directory, started.run)} from the best kernel of \`${parent.id}\`.`);
      } catch (error) {
        if (error instanceof AppError) return whisper(deps, click, `:warning: ${error.userMessage}`);
        deps.logger.error({ err: error, runId: click.value }, 'continue-from-best failed');
        whisper(deps, click, ':x: Something went wrong on our side; it has been logged.');
      }
    });
  });
}
