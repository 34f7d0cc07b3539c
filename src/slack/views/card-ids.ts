/**
 * Decision card ids as Slack carries them. The engine names a card `<run id>.d<n>`; its message
 * carries the id in the actions block's `block_id` (`ks_card:<id>`) and in the values of its
 * buttons, so a click, a form and a thread reply each know which card they answer.
 */
const CARD_ID = /^([a-z0-9][a-z0-9-]{2,63})\.d([1-9]\d{0,6})$/;

export const CARD_BLOCK_PREFIX = 'ks_card:';

/** The run and number of a card id, or undefined when it is not one. */
export function parseCardId(id: string): { runId: string; seq: number } | undefined {
  const m = CARD_ID.exec(id);
  return m ? { runId: m[1]!, seq: Number(m[2]) } : undefined;
}

/** How people read a card's id: `d3`. */
export function cardLabel(id: string): string {
  const parsed = parseCardId(id);
  return parsed ? `d${parsed.seq}` : id;
}

export function cardBlockId(cardId: string): string {
  return `${CARD_BLOCK_PREFIX}${cardId}`;
}

/** The card id a click came from (its actions block), if any. */
export function cardFromBlockId(blockId: string | undefined): string | undefined {
  if (!blockId?.startsWith(CARD_BLOCK_PREFIX)) return undefined;
  const id = blockId.slice(CARD_BLOCK_PREFIX.length);
  return parseCardId(id) ? id : undefined;
}
