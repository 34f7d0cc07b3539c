import { z } from 'zod';
import { duration, optionalString } from '../fields.js';

const PREFIX = /^[A-Za-z0-9_.-]+$/;

export const QueueEnvSchema = z.object({
  KERNELSEEK_QUEUE_PREFIX: z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    z
      .string()
      .regex(PREFIX, { message: 'must be letters, digits, _ . or - (no colons), e.g. kernelseek or ks-staging' })
      .default('kernelseek'),
  ),
  KERNELSEEK_WORKER_LOCK: duration('10s'),
  KERNELSEEK_WORKER_STALLED_CHECK: duration('5s'),
  KERNELSEEK_WORKER_GRACE: duration('60s'),
  // Checked (length) where it is used, src/queue/result-key.ts, so that an error never echoes it.
  KERNELSEEK_RESULT_KEY: optionalString(),
});

export interface QueueConfig {
  /**
   * Namespace of every BullMQ key and worker heartbeat in Redis. Deployments (and tests) that share
   * one Redis use different prefixes.
   */
  prefix: string;
  /** How long a worker's lock on a job lasts without renewal (renewed every half of it). */
  lockSeconds: number;
  /** How often workers look for jobs whose lock expired (a crashed worker's jobs). */
  stalledCheckSeconds: number;
  /** On SIGTERM, how long the active job may run on before it is handed back to the queue. */
  graceSeconds: number;
  /**
   * The secret GPU workers seal results with and dispatchers check them with (HMAC-SHA256); unset:
   * a key file in the data dir (src/queue/result-key.ts). Never sent through Redis.
   */
  resultKey?: string;
}
