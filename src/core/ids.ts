import { randomInt } from 'node:crypto';

const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/**
 * Short ids people can type in Slack (`ks-7f3a2c9d`): 8 characters from an unambiguous alphabet
 * (no 0/o, 1/l/i). node's crypto.randomInt draws each one uniformly (a byte taken modulo 31 made
 * the first eight letters likelier); no id library is needed for eight characters.
 */
export function newRunId(): string {
  let id = '';
  for (let i = 0; i < 8; i += 1) id += ALPHABET[randomInt(ALPHABET.length)];
  return `ks-${id}`;
}
