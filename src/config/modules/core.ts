import { z } from 'zod';
import { optionalString } from '../fields.js';

export const CoreEnvSchema = z.object({
  KERNELSEEK_DATA_DIR: optionalString(),
  KERNELSEEK_TASKS_DIR: optionalString(),
  LOG_LEVEL: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        message: 'must be one of fatal, error, warn, info, debug, trace, silent',
      })
      .default('info'),
  ),
});

export interface CoreConfig {
  /** Local state: embedded database, run workspaces, compile cache. */
  dataDir: string;
  logLevel: z.infer<typeof CoreEnvSchema>['LOG_LEVEL'];
  /** Repository root: the trusted checkout that holds harness/ and questions/. */
  repoRoot: string;
  /** Task folders (`<dir>/<task>/task.yaml`): the trusted copy, never an agent's workspace. */
  tasksDir: string;
}
