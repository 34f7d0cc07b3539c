/**
 * Which decision card a thread reply answers. Slack's thread replies carry no parent card, so the
 * binding is by time, on the thread's own clock: a reply answers **the card that was open when it
 * was written** — the latest card posted before the reply (message ts against card ts), if that card
 * had not closed by the reply's ts.
 *
 * - That card is still open: the reply answers it (and only it).
 * - It closed after the reply was written (the bank answered first, the agent moved on, the run
 *   ended while the reply was on its way): the reply is answered in the thread "that question is
 *   closed; the open one is …" and never reaches the agent.
 * - No card before it, or the latest one had closed before it was written: the reply is a question
 *   between decision points, delivered at the agent's next turn boundary (DESIGN §7).
 */

export interface CardTimes {
  id: string;
  /** The card's message ts (Slack's clock); null until it was posted. */
  slackTs: string | null;
  /** When the run reached the decision point (just before the card is posted). */
  openedAt: Date;
  closedAt: Date | null;
}

/** A time as a Slack ts, for cards whose message ts is not known yet. */
function millisToTs(ms: number): string {
  return `${Math.floor(ms / 1000)}.${String((ms % 1000) * 1000).padStart(6, '0')}`;
}

export type ReplyBinding = { kind: 'open'; cardId: string } | { kind: 'closed'; cardId: string } | { kind: 'unbound' };

/** Slack ts (`seconds.micro`) compared exactly, without rounding through a double. */
export function compareTs(a: string, b: string): number {
  const [as = '0', af = ''] = a.split('.');
  const [bs = '0', bf = ''] = b.split('.');
  const sec = BigInt(as) - BigInt(bs);
  if (sec !== 0n) return sec < 0n ? -1 : 1;
  const fa = af.padEnd(6, '0');
  const fb = bf.padEnd(6, '0');
  return fa === fb ? 0 : fa < fb ? -1 : 1;
}

/** A Slack ts as epoch milliseconds. */
export function tsToMillis(ts: string): number {
  const [s = '0', f = ''] = ts.split('.');
  return Number(s) * 1000 + Math.floor(Number(`0.${f || '0'}`) * 1000);
}

export function bindReply(replyTs: string, cards: readonly CardTimes[]): ReplyBinding {
  let latest: { card: CardTimes; ts: string } | undefined;
  for (const card of cards) {
    // A card whose message ts is not recorded yet (the reply raced the reporter by milliseconds)
    // counts from the moment its decision point was reached.
    const ts = card.slackTs ?? millisToTs(card.openedAt.getTime());
    if (compareTs(ts, replyTs) >= 0) continue;
    if (!latest || compareTs(ts, latest.ts) > 0) latest = { card, ts };
  }
  if (!latest) return { kind: 'unbound' };
  const { card } = latest;
  if (!card.closedAt) return { kind: 'open', cardId: card.id };
  return card.closedAt.getTime() > tsToMillis(replyTs) ? { kind: 'closed', cardId: card.id } : { kind: 'unbound' };
}
