import { z } from 'zod';
import { url } from '../fields.js';

export const RedisEnvSchema = z.object({
  REDIS_URL: url('redis://127.0.0.1:6379', ['redis:', 'rediss:']),
});

export interface RedisConfig {
  url: string;
}
