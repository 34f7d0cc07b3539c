import type { SlackDeps } from '../../deps.js';
import type { SlackView } from '../../views/format.js';

/** What one `/kernelseek` subcommand handler gets: who asked, where, and a way to answer them alone. */
export interface CommandContext {
  deps: SlackDeps;
  user: string;
  channel: string;
  /** Answers the person who typed the command, visible to them only (through the response_url). */
  reply(view: SlackView | string): Promise<void>;
}
