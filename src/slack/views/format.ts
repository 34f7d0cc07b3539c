import { clip, escapeMrkdwn, SLACK_TEXT_LIMITS } from '../poster/limits.js';
import type { KnownBlock } from './block-kit.js';

/** Formatting shared by every view: figures people read at a glance, and safe mrkdwn. */

export function fmtSpeedup(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  return `${x >= 10 ? x.toFixed(1) : x.toFixed(2)}x`;
}

export function fmtUsd(x: number): string {
  return x < 0.01 && x > 0 ? '<$0.01' : `$${x.toFixed(2)}`;
}

export function fmtDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** A Slack user id becomes a mention; anything else (a terminal user's name, `bank`) stays text. */
export function who(author: string): string {
  return /^[UW][A-Z0-9]{2,}$/.test(author) ? `<@${author}>` : escapeMrkdwn(author);
}

/** The engine's own words naming a person by id: `stopped by U012AB3CD` (control.ts stopRun). */
const STOPPED_BY = /^stopped by ([UW](?=[A-Z0-9]*\d)[A-Z0-9]{8,10})$/;

/**
 * A run's error or end note with the person the engine named made a mention, so Slack shows their
 * name, never the raw id. Only the engine's own phrase: an id anywhere else in the text may have been
 * written by the model or a candidate (a refusal, a crash's output), and stays text. Apply after escaping.
 */
export function withMentions(text: string): string {
  return text.replace(STOPPED_BY, 'stopped by <@$1>');
}

/** A time Slack shows in each reader's own time zone. */
export function slackTime(iso: string | Date): string {
  const d = typeof iso === 'string' ? new Date(iso) : iso;
  const epoch = Math.floor(d.getTime() / 1000);
  return `<!date^${epoch}^{time}|${d.toISOString().slice(11, 16)} UTC>`;
}

/** Quoted text from a person or the model, escaped so it can never ping a channel or break layout. */
export function quote(text: string): string {
  return escapeMrkdwn(text)
    .split('\n')
    .map((l) => `>${l}`)
    .join('\n');
}

export const STATUS_LABEL: Record<string, { emoji: string; label: string }> = {
  queued: { emoji: ':hourglass_flowing_sand:', label: 'Queued' },
  running: { emoji: ':large_green_circle:', label: 'Running' },
  waiting: { emoji: ':raising_hand:', label: 'Waiting for a question' },
  paused: { emoji: ':double_vertical_bar:', label: 'Paused' },
  finished: { emoji: ':checkered_flag:', label: 'Finished' },
  stopped: { emoji: ':octagonal_sign:', label: 'Stopped' },
  failed: { emoji: ':x:', label: 'Failed' },
};

export function section(text: string): KnownBlock {
  return { type: 'section', text: { type: 'mrkdwn', text: clip(text, SLACK_TEXT_LIMITS.sectionText) } };
}

export function fields(pairs: [string, string][]): KnownBlock {
  return {
    type: 'section',
    // Slack allows 10 fields per section.
    fields: pairs.slice(0, 10).map(([k, v]) => ({ type: 'mrkdwn' as const, text: clip(`*${k}*\n${v}`, SLACK_TEXT_LIMITS.sectionField) })),
  };
}

export function context(text: string): KnownBlock {
  return { type: 'context', elements: [{ type: 'mrkdwn', text: clip(text, SLACK_TEXT_LIMITS.contextText) }] };
}

export function header(text: string): KnownBlock {
  return { type: 'header', text: { type: 'plain_text', text: clip(text, SLACK_TEXT_LIMITS.headerText), emoji: true } };
}

/** What a message needs: fallback text (notifications, screen readers) and blocks. */
export interface SlackView {
  text: string;
  blocks: KnownBlock[];
  /** Long text that did not fit, to attach as a file in the same thread. */
  files?: { filename: string; content: string | Buffer; title?: string }[];
}
