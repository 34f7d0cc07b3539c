import type { App } from '@slack/bolt';
import type { SlackDeps } from '../deps.js';
import { registerAskBankAction } from './actions/ask-bank.js';
import { registerPromoteQuestionAction } from './actions/promote-question.js';
import { registerStopRunAction } from './actions/stop-run.js';
import { registerKernelseekCommand } from './commands/kernelseek.js';
import { registerReactionAdded } from './events/reaction-added.js';
import { registerThreadReplies } from './messages/thread-reply.js';
import { registerEventDedupe } from './middleware/dedupe-events.js';
import { registerThreadOrdering } from './middleware/order-thread-events.js';
import { registerPromoteQuestionSubmitted } from './views/promote-question-submitted.js';

/** Every listener, by Slack surface. Order matters only for the middleware: ordering, then dedupe. */
export function registerListeners(app: App, deps: SlackDeps): void {
  registerThreadOrdering(app);
  registerEventDedupe(app, deps);
  registerKernelseekCommand(app, deps);
  registerThreadReplies(app, deps);
  registerReactionAdded(app, deps);
  registerAskBankAction(app, deps);
  registerStopRunAction(app, deps);
  registerPromoteQuestionAction(app, deps);
  registerPromoteQuestionSubmitted(app, deps);
}
