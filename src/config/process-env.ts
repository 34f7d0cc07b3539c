/** Variables as read from the environment; every field optional. */
export type Env = Record<string, string | undefined>;

/**
 * A snapshot of this process's environment: the one place the product reads process.env. Its own
 * module, free of imports, so the CLI entry can take it without loading the config schemas (zod):
 * `kernelseek --help` never needs them.
 */
export function readProcessEnv(): Env {
  return { ...process.env };
}
