/**
 * Absolute paths cut to their last part ("/tmp/ks-x/kernel.cpp" → "…/kernel.cpp"). Evidence goes
 * to reviewers, a team's repository and Slack: where a file lived on a server (a worker's temporary
 * folder, the data directory, a home) says nothing about the kernel and is not theirs to see.
 * A path starts a word, follows `=`, a quote or a bracket, or follows a compiler's -I/-L/-B;
 * URLs (`scheme://host/...`) are left alone.
 */
const ABSOLUTE_PATH = /(^|[\s'"=([,]|-[ILB])\/(?!\/)[^\s'",;)\]]+/g;

export function scrubPaths(text: string): string {
  return text.replace(ABSOLUTE_PATH, (match: string, before: string) => {
    const p = match.slice(before.length).replace(/\/+$/, '');
    const last = p.slice(p.lastIndexOf('/') + 1);
    return `${before}…/${last}`;
  });
}
