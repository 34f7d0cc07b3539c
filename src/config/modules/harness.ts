import { z } from 'zod';
import { optionalString } from '../fields.js';

export const HarnessEnvSchema = z.object({
  KERNELSEEK_PYTHON: optionalString(),
  KERNELSEEK_NVCC: optionalString(),
});

export interface HarnessConfig {
  /** Unset: the first of `python3`, `/usr/bin/python3` that imports torch and yaml. */
  python: string | undefined;
  nvcc: string;
}
