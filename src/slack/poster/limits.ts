/**
 * Slack's size limits (https://docs.slack.dev/reference/block-kit/blocks, chat.postMessage). A
 * message over them is refused (`msg_too_long`, `invalid_blocks`), so everything we send is capped
 * first and the rest travels as a file in the same thread.
 */
export const SLACK_TEXT_LIMITS = {
  /** chat.postMessage `text`: Slack refuses longer messages. */
  messageText: 40_000,
  /** A section block's text. */
  sectionText: 3000,
  /** One field of a section block. */
  sectionField: 2000,
  /** A header block's plain text. */
  headerText: 150,
  /** A context block's text element. */
  contextText: 2000,
  /** Blocks per message. */
  blocks: 50,
  /** A button's label. */
  buttonText: 75,
  /** A button's value. */
  buttonValue: 2000,
  /** assistant.threads.setStatus: loading messages Slack rotates through. */
  loadingMessages: 10,
  /** A status line (and each loading message): kept short, as Slack shows one line. */
  statusText: 100,
} as const;

/** How much of a long piece of text (a question, an error) is shown inline before "see the file". */
export const INLINE_TEXT_CHARS = 2800;

export interface CappedText {
  text: string;
  /** The whole text, when it had to be cut (send it as a file). */
  overflow: string | undefined;
}

/**
 * Cuts `text` to at most `max` characters, at a line or word boundary when one is near, and says so
 * at the end. Surrogate pairs are never split.
 */
export function capText(text: string, max: number, marker = '… (cut: the full text is in the attached file)'): CappedText {
  if (text.length <= max) return { text, overflow: undefined };
  const room = Math.max(0, max - marker.length - 1);
  let cut = text.slice(0, room);
  const lastBreak = Math.max(cut.lastIndexOf('\n'), cut.lastIndexOf(' '));
  if (lastBreak > room * 0.8) cut = cut.slice(0, lastBreak);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return { text: `${cut.trimEnd()}\n${marker}`, overflow: text };
}

/** Escapes the three characters Slack's mrkdwn treats as control characters. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A plain-text label cut to `max` characters (buttons, headers). */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
