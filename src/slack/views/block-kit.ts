import type { types } from '@slack/bolt';

/** Block Kit types, through @slack/bolt (the package we depend on) rather than its transitive deps. */
export type KnownBlock = types.KnownBlock;
export type SectionBlock = types.SectionBlock;
export type ActionsBlock = types.ActionsBlock;
export type Button = types.Button;
