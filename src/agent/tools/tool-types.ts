import type { Config } from '../../config/index.js';
import type { Logger } from '../../core/logger.js';
import type { Run, Store } from '../../db/index.js';
import type { LoadedTask } from '../../harness/tasks.js';
import type { Dispatcher } from '../../queue/dispatcher.js';
import type { RunReporter } from '../reporter.js';
import type { Workspace } from '../workspace/workspace.js';

/** Everything a tool may use. Tools never see credentials: the config they read is the agent's. */
export interface ToolContext {
  config: Config;
  store: Store;
  dispatcher: Dispatcher;
  run: Run;
  task: LoadedTask;
  workspace: Workspace;
  reporter: RunReporter;
  logger: Logger;
  toolUseId: string;
  signal?: AbortSignal;
}

/** What goes back to the model as the tool_result, plus what the engine learns from it. */
export interface ToolResult {
  content: string;
  isError: boolean;
  /** Set by `evaluate`: the stored evaluation and whether it is the run's new best. */
  evaluation?: { id: number; seq: number; newBest: boolean };
}
