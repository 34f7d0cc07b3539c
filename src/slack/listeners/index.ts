import type { App } from '@slack/bolt';
import type { SlackDeps } from '../deps.js';
import { registerAnswerCardActions } from './actions/answer-card.js';
import { registerAskBankAction } from './actions/ask-bank.js';
import { registerExportAction } from './actions/export.js';
import { registerOpenPullRequestAction } from './actions/open-pr.js';
import { registerContinueRunAction } from './actions/continue-run.js';
import { registerPromoteQuestionAction } from './actions/promote-question.js';
import { registerStopRunAction } from './actions/stop-run.js';
import { registerKernelseekCommand } from './commands/kernelseek.js';
import { registerAppHomeOpened } from './events/app-home-opened.js';
import { registerEntityDetails } from './events/entity-details.js';
import { registerLinkShared } from './events/link-shared.js';
import { registerReactionAdded } from './events/reaction-added.js';
import { registerThreadReplies } from './messages/thread-reply.js';
import { registerEventDedupe } from './middleware/dedupe-events.js';
import { registerThreadOrdering } from './middleware/order-thread-events.js';
import { registerAnswerSubmitted } from './views/answer-submitted.js';
import { registerPromoteQuestionSubmitted } from './views/promote-question-submitted.js';
import { createWorkQueue, type WorkQueue } from './work-queue.js';

/** Starts and stops in progress at once; more wait their turn after their ack. */
const HEAVY_COMMAND_CONCURRENCY = 2;

/**
 * Every listener, by Slack surface. Order matters only for the middleware: ordering, then dedupe.
 * Returns the queue of work still running after its ack, so a shutdown can let it finish.
 */
export function registerListeners(app: App, deps: SlackDeps): WorkQueue {
  const heavy = createWorkQueue(HEAVY_COMMAND_CONCURRENCY);
  registerThreadOrdering(app);
  registerEventDedupe(app, deps);
  registerKernelseekCommand(app, deps, heavy);
  registerThreadReplies(app, deps);
  registerReactionAdded(app, deps);
  registerAskBankAction(app, deps);
  registerStopRunAction(app, deps);
  registerPromoteQuestionAction(app, deps);
  registerExportAction(app, deps);
  registerOpenPullRequestAction(app, deps);
  registerPromoteQuestionSubmitted(app, deps);
  registerAnswerCardActions(app, deps);
  registerAnswerSubmitted(app, deps);
  registerContinueRunAction(app, deps, heavy);
  registerLinkShared(app, deps);
  registerEntityDetails(app, deps);
  registerAppHomeOpened(app, deps);
  return heavy;
}
