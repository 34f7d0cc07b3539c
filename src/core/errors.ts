/**
 * Errors say who is at fault. `userMessage` is safe to show to a person (Slack, terminal);
 * `message` may carry internal detail for logs.
 */
export class AppError extends Error {
  readonly code: string;
  readonly userMessage: string;

  constructor(code: string, message: string, options: { userMessage?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.userMessage = options.userMessage ?? message;
  }
}

/** The deployment's configuration is wrong (environment variables, files on disk). */
export class ConfigError extends AppError {
  readonly problems: string[];
  /** What to do, said after the problems; unset: fix the variables (README's table). */
  readonly fix: string | undefined;
  constructor(problems: string[], options: { message?: string; fix?: string } = {}) {
    super('config_invalid', options.message ?? `Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
    this.fix = options.fix;
  }
}

/** The person's input is wrong (a command argument, a task name, a YAML file they wrote). */
export class UserInputError extends AppError {
  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super(options.code ?? 'user_input', message, options);
  }
}

/** The model did something the protocol does not allow (bad tool input, empty response, …). */
export class ModelBehaviorError extends AppError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('model_behavior', message, options);
  }
}

/** The harness could not produce a result (as opposed to a candidate failing, which is a result). */
export class HarnessError extends AppError {
  constructor(message: string, options: { cause?: unknown; code?: string } = {}) {
    super(options.code ?? 'harness_failed', message, options);
  }
}

/** Retrying cannot help: a spend limit, a malformed job, a run that no longer exists. */
export class NonRetryableError extends AppError {
  constructor(code: string, message: string, options: { userMessage?: string; cause?: unknown } = {}) {
    super(code, message, options);
  }
}

/** The message to show a person for any thrown value. */
export function describeError(error: unknown): string {
  if (error instanceof AppError) return error.userMessage;
  if (error instanceof Error) return error.message;
  return String(error);
}
