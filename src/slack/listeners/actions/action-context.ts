import type { BlockAction, ButtonAction } from '@slack/bolt';
import type { SlackDeps } from '../../deps.js';
import type { KnownBlock } from '../../views/block-kit.js';
import { context } from '../../views/format.js';

/** The parts of a button click the handlers use. */
export interface ButtonClick {
  user: string;
  channel: string | undefined;
  messageTs: string | undefined;
  threadTs: string | undefined;
  value: string;
  triggerId: string;
  blocks: KnownBlock[] | undefined;
}

export function readButtonClick(body: BlockAction, action: ButtonAction): ButtonClick {
  const message = body.message as { ts?: string; thread_ts?: string; blocks?: KnownBlock[] } | undefined;
  return {
    user: body.user.id,
    channel: body.channel?.id ?? body.container?.channel_id,
    messageTs: message?.ts ?? body.container?.message_ts,
    threadTs: message?.thread_ts ?? body.container?.thread_ts,
    value: action.value ?? '',
    triggerId: body.trigger_id,
    blocks: message?.blocks,
  };
}

/**
 * Replaces a message's buttons with a line saying who did what, so a decision is not taken twice and
 * the thread records it.
 */
export function resolveButtons(deps: Pick<SlackDeps, 'poster'>, click: ButtonClick, note: string, fallbackText: string): void {
  if (!click.channel || !click.messageTs || !click.blocks) return;
  const blocks: KnownBlock[] = click.blocks.filter((b) => b.type !== 'actions');
  blocks.push(context(note));
  void deps.poster.updateMessage({ channel: click.channel, ts: click.messageTs, text: fallbackText, blocks });
}

export function whisper(deps: Pick<SlackDeps, 'poster'>, click: ButtonClick, text: string): void {
  if (!click.channel) return;
  void deps.poster.postEphemeral({ channel: click.channel, user: click.user, ...(click.threadTs ? { threadTs: click.threadTs } : {}), text });
}
