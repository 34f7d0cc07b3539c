import type { BlockAction, ButtonAction } from '@slack/bolt';
import type { SlackDeps } from '../../deps.js';

/** The parts of a button click the handlers use. */
export interface ButtonClick {
  user: string;
  channel: string | undefined;
  messageTs: string | undefined;
  threadTs: string | undefined;
  value: string;
  triggerId: string;
}

export function readButtonClick(body: BlockAction, action: ButtonAction): ButtonClick {
  const message = body.message as { ts?: string; thread_ts?: string } | undefined;
  return {
    user: body.user.id,
    channel: body.channel?.id ?? body.container?.channel_id,
    messageTs: message?.ts ?? body.container?.message_ts,
    threadTs: message?.thread_ts ?? body.container?.thread_ts,
    value: action.value ?? '',
    triggerId: body.trigger_id,
  };
}

export function whisper(deps: Pick<SlackDeps, 'poster'>, click: ButtonClick, text: string): void {
  if (!click.channel) return;
  void deps.poster.postEphemeral({ channel: click.channel, user: click.user, ...(click.threadTs ? { threadTs: click.threadTs } : {}), text });
}
