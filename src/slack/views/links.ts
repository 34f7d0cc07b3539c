import type { SlackDirectory } from '../directory.js';

/**
 * Runs as links to their thread, people as names. A run's id links to its thread's root (the status
 * card) by its permalink; where Slack gives none (no thread: a terminal run; a lookup that failed)
 * the id stays, in code font. Never a server path.
 */

/** A mrkdwn link, or the label alone when there is no URL. Labels are ids: nothing to escape. */
export function mrkdwnLink(url: string | undefined, label: string): string {
  return url ? `<${url}|${label}>` : `\`${label}\``;
}

export async function runLink(directory: SlackDirectory | undefined, run: { id: string; slack: { channel: string; threadTs: string } | null }, label = run.id): Promise<string> {
  const url = run.slack && directory ? await directory.permalink(run.slack.channel, run.slack.threadTs) : undefined;
  return mrkdwnLink(url, label);
}

/** The public page of a run, which unfurls (`KERNELSEEK_PUBLIC_URL/runs/<id>`), when the app has an address. */
export function runPageUrl(publicUrl: string | undefined, runId: string): string | undefined {
  return publicUrl ? `${publicUrl.replace(/\/+$/, '')}/runs/${encodeURIComponent(runId)}` : undefined;
}

/** The run id a public run URL names, if it is one of ours. */
export function runIdFromUrl(publicUrl: string | undefined, url: string): string | undefined {
  if (!publicUrl) return undefined;
  let u: URL;
  let base: URL;
  try {
    u = new URL(url);
    base = new URL(publicUrl);
  } catch {
    return undefined;
  }
  if (u.host.toLowerCase() !== base.host.toLowerCase()) return undefined;
  const prefix = base.pathname.replace(/\/+$/, '');
  const m = /^\/runs\/([a-z0-9][a-z0-9-]{2,63})\/?$/.exec(u.pathname.slice(prefix.length));
  return u.pathname.startsWith(prefix) && m ? m[1] : undefined;
}
