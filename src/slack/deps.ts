import type { SlackConfig } from '../config/index.js';
import type { Logger } from '../core/logger.js';
import type { Store } from '../db/index.js';
import type { TaskCatalog } from '../harness/tasks.js';
import type { RunControl } from './agent-port.js';
import type { SlackDirectory } from './directory.js';
import type { SlackPoster } from './poster/poster.js';
import type { ResultsPort } from './results-port.js';
import type { BankLine } from './views/lists.js';

/** The question bank, as Slack uses it (`/kernelseek bank`, promoting a person's question). */
export interface BankPort {
  list(): Promise<BankLine[]>;
  /** Throws a UserInputError (safe to show) when the question does not qualify (e.g. it names a technique). */
  promote(questionId: number, input: { kind: 'layer_shift' | 'limit_rejection'; triggers: string[]; by: string }): Promise<{ id: string }>;
}

/** The daily digest, posted on demand by `/kernelseek digest`. */
export interface DigestPort {
  /** Posts the digest of the last day (or week) to `channel`; returns a line for the person who asked. */
  postNow(input: { channel: string; by: string; window?: 'day' | 'week' | undefined }): Promise<string>;
}

/** Everything the listeners use, passed in once (no globals; configuration comes from config/). */
export interface SlackDeps {
  slack: SlackConfig;
  store: Store;
  control: RunControl;
  /** The process's one outbound poster. */
  poster: SlackPoster;
  logger: Logger;
  /** Reads `kernels/` on demand, so a new task folder shows up without a restart. */
  loadTasks(): Promise<TaskCatalog>;
  /** Absent until the deployment wires the bank in; commands that need it say so. */
  bank?: BankPort | undefined;
  digest?: DigestPort | undefined;
  /** A run's result taken out: the final card's *Export* and *Open pull request*. */
  results?: ResultsPort | undefined;
  /** The poster's guard against server paths, for what goes out another way (slash-command answers). */
  scrub?: ((text: string) => string) | undefined;
  /** Permalinks and display names (cached reads); without it runs show as ids and people as mentions. */
  directory?: SlackDirectory | undefined;
}
