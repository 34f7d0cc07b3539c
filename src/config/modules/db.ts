import { z } from 'zod';
import { url } from '../fields.js';

export const DbEnvSchema = z.object({
  DATABASE_URL: url('postgres://user@127.0.0.1:5432/kernelseek', ['postgres:', 'postgresql:']),
});

/** Postgres when a URL is given; otherwise the embedded PGlite database under the data dir. */
export type DbConfig = { kind: 'postgres'; url: string } | { kind: 'pglite'; dataDir: string };
