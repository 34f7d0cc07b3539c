import type { PullRequestOutcome } from '../../export/index.js';
import { escapeMrkdwn } from '../poster/limits.js';
import type { ResultOffer } from '../results-port.js';
import { ACTION_IDS } from './action-ids.js';
import type { Button, KnownBlock } from './block-kit.js';
import { section, type SlackView } from './format.js';

/**
 * The final card's way out for a verified result: *Export* (the evidence and the patch, as files
 * in the thread) and, when the task names the team's repository, *Open pull request*. The card
 * includes these blocks as they are; nothing here ever names a path on the server.
 */
export function renderResultActions(offer: ResultOffer | null | undefined): KnownBlock[] {
  if (!offer?.export) return [];
  const buttons: Button[] = [{ type: 'button', action_id: ACTION_IDS.exportResult, text: { type: 'plain_text', text: 'Export' }, value: offer.runId }];
  if (offer.pullRequest) {
    buttons.push({
      type: 'button',
      action_id: ACTION_IDS.openPullRequest,
      style: 'primary',
      text: { type: 'plain_text', text: 'Open pull request' },
      value: offer.runId,
      confirm: {
        title: { type: 'plain_text', text: 'Open a pull request?' },
        text: { type: 'mrkdwn', text: "A new branch with this kernel is pushed to the task's repository and a pull request opened with the evidence, naming you as the one who asked." },
        confirm: { type: 'plain_text', text: 'Open it' },
        deny: { type: 'plain_text', text: 'Cancel' },
      },
    });
  }
  return [{ type: 'actions', block_id: 'ks_result_actions', elements: buttons }];
}

/** Slack's bold is one asterisk; the evidence's Markdown uses two. */
const toMrkdwn = (markdown: string) => escapeMrkdwn(markdown).replace(/\*\*/g, '*');

export function renderExportComment(runId: string, seq: number | null, user: string, standing: string): string {
  return `:package: <@${user}> exported ${runId} eval #${seq ?? '?'}: the evidence and the diff against the baseline. ${toMrkdwn(standing)}`;
}

/** The pull request (or the pushed branch) in the thread, with who asked. */
export function renderPullRequestMessage(outcome: PullRequestOutcome, user: string): SlackView {
  const branch = `\`${escapeMrkdwn(outcome.branch)}\``;
  const base = `\`${escapeMrkdwn(outcome.base)}\``;
  const repo = outcome.github ? `${outcome.github.owner}/${outcome.github.name}` : outcome.repoIsUrl ? `\`${escapeMrkdwn(outcome.repo)}\`` : "the task's repository";
  let text: string;
  if (outcome.pullRequest) {
    text = `:twisted_rightwards_arrows: <@${user}> opened a pull request: <${outcome.pullRequest.url}|${repo}#${outcome.pullRequest.number}> (branch ${branch} into ${base}).`;
  } else if (outcome.github && outcome.manual) {
    text = `:twisted_rightwards_arrows: <@${user}> pushed branch ${branch} to ${repo}; no pull request was opened (${escapeMrkdwn(outcome.notOpened ?? 'unknown reason')}). <${outcome.manual}|Open it on GitHub>.`;
  } else {
    text = `:twisted_rightwards_arrows: <@${user}> pushed branch ${branch} to ${repo}, which is not on GitHub: open the request there, from ${branch} into ${base}. Its description is the evidence (*Export* posts it here).`;
  }
  return { text, blocks: [section(text)] };
}
