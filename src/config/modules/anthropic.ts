import { z } from 'zod';
import { optionalString, url } from '../fields.js';

/** The default model for runs; a run may override it. */
export const DEFAULT_MODEL = 'claude-sonnet-4-6';

export const AnthropicEnvSchema = z.object({
  ANTHROPIC_API_KEY: optionalString(),
  ANTHROPIC_BASE_URL: url('https://api.anthropic.com', ['http:', 'https:']),
  KERNELSEEK_MODEL: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .regex(/^[a-z0-9][a-z0-9.\-_@:]*$/i, { message: 'must be a model id such as claude-sonnet-4-6' })
      .default(DEFAULT_MODEL),
  ),
});

export interface AnthropicConfig {
  /** Passed to the SDK as given; the SDK itself reports a missing key when a run needs one. */
  apiKey: string | undefined;
  baseUrl: string | undefined;
  model: string;
}
