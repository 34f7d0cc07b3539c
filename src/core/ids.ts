import { randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** Short ids people can type in Slack (`ks-7f3a2c9d`): 8 characters from an unambiguous alphabet. */
export function newRunId(): string {
  const bytes = randomBytes(8);
  let id = '';
  for (const b of bytes) id += ALPHABET[b % ALPHABET.length];
  return `ks-${id}`;
}
