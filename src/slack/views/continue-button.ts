import type { RunSummary, RunView } from '../agent-port.js';
import { ACTION_IDS } from './action-ids.js';
import type { KnownBlock } from './block-kit.js';

/**
 * *Continue from best* on a run's final card: a new run of the same task starts from this run's best
 * kernel, with its history summarised, in a thread of its own (docs/slack.md, "Continue and fork").
 * Nothing to continue from when no candidate was correct.
 */
export function continueFromBestBlocks(run: RunView, summary: Pick<RunSummary, 'best'>): KnownBlock[] {
  if (!summary.best || !run.slack) return [];
  return [
    {
      type: 'actions',
      block_id: 'ks_continue',
      elements: [{ type: 'button', action_id: ACTION_IDS.continueRun, text: { type: 'plain_text', text: 'Continue from best' }, value: run.id }],
    },
  ];
}
