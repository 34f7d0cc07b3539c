/**
 * Nothing in Slack names a path on the server (DESIGN §12): a compiler error, a Python traceback or
 * a git failure carries the build directory, the data directory or the checkout, and a thread is no
 * place for them. An absolute path is cut to `…/` and its last component, so `/tmp/ks-build-x/
 * kernel.cpp:12: error` still says which file and line; a known root standing alone (the data
 * directory `/data`) becomes its label. `/workspace/…` is the sandbox's view of the run's own
 * workspace, not a server path, and is kept.
 */

export interface PathRoot {
  path: string;
  label: string;
}

/**
 * An absolute path of two or more components: one that starts a word (after a space, a quote, a
 * bracket, `=`, a mrkdwn mark), so a URL (`https://host/a/b`), a fraction (`3/11`), a `//` aside or
 * `slack#/types/link` is left alone.
 */
const ABSOLUTE_PATH = /(?<=^|[\s"'`(=[{,;|>*_~])\/(?!workspace(?:\/|\b))(?:[\w.+@%-]+\/)+[\w.+@%-]*/g;

/** A scrubber for `roots` (longest first, so a data dir inside the checkout keeps its own label). */
export function createPathScrubber(roots: PathRoot[]): (text: string) => string {
  const known = roots
    .filter((r) => r.path.length > 1 && r.path.startsWith('/'))
    .map((r) => ({ path: r.path.replace(/\/+$/, ''), label: r.label }))
    .sort((a, b) => b.path.length - a.path.length);
  return (text: string) => {
    if (!text.includes('/')) return text;
    let out = text.replace(ABSOLUTE_PATH, (match) => {
      const last = match.split('/').filter(Boolean).at(-1);
      return last ? `…/${last}` : '…/';
    });
    // A root of one component (`/data`) is not caught above when it stands alone.
    for (const root of known) out = out.split(root.path).join(root.label);
    return out;
  };
}

/** `value` with `fn` applied to every string in it (objects and arrays copied, not changed). */
export function scrubStrings<T>(value: T, fn: (text: string) => string): T {
  if (typeof value === 'string') return fn(value) as T;
  if (Array.isArray(value)) return value.map((v) => scrubStrings(v, fn)) as T;
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = scrubStrings(v, fn);
    return out as T;
  }
  return value;
}
