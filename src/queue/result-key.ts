import { createHash, randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/index.js';
import { ConfigError } from '../core/errors.js';

/**
 * The key GPU workers seal results with and dispatchers check them with (src/queue/result-seal.ts).
 * It never goes through Redis: whoever can write to Redis must not be able to forge a result.
 */
export interface ResultKey {
  secret: Buffer;
  /** A fingerprint that names the key in logs and refusals without revealing it. */
  id: string;
  /** Where it came from, for messages: `KERNELSEEK_RESULT_KEY` or the key file's path. */
  source: string;
}

export const MIN_RESULT_KEY_CHARS = 32;

const HOW_TO_FIX = `generate one with \`openssl rand -hex 32\` and give serve, kernelseek eval --remote and every gpu-worker the same KERNELSEEK_RESULT_KEY`;

export function resultKeyFromSecret(secret: string, source: string): ResultKey {
  const text = secret.trim();
  if (text.length < MIN_RESULT_KEY_CHARS) {
    // The value itself is never echoed: a short key in a log is still a leaked key.
    throw new ConfigError([`${source}: the result key must be at least ${MIN_RESULT_KEY_CHARS} characters (it has ${text.length}): ${HOW_TO_FIX}`]);
  }
  const bytes = Buffer.from(text, 'utf8');
  const id = createHash('sha256').update('kernelseek result key id\0').update(bytes).digest('hex').slice(0, 12);
  return { secret: bytes, id, source };
}

/** `<data dir>/secrets/result-key`: the key of processes on one host that share a data dir. */
export function resultKeyFile(config: Config): string {
  return path.join(config.core.dataDir, 'secrets', 'result-key');
}

async function readKeyFile(file: string): Promise<ResultKey> {
  const info = await stat(file);
  if ((info.mode & 0o077) !== 0) {
    throw new ConfigError([`${file}: the result key file is readable by other users (mode ${(info.mode & 0o777).toString(8)}): run chmod 600 ${file}, or set KERNELSEEK_RESULT_KEY`]);
  }
  return resultKeyFromSecret(await readFile(file, 'utf8'), file);
}

/**
 * KERNELSEEK_RESULT_KEY when set; otherwise the data dir's key file, created (0600, 32 random
 * bytes) on first use. `serve` and a `gpu-worker` on one host with the default data dir then agree
 * without any setting; processes on different hosts need KERNELSEEK_RESULT_KEY.
 */
export async function loadResultKey(config: Config): Promise<ResultKey> {
  if (config.queue.resultKey !== undefined) return resultKeyFromSecret(config.queue.resultKey, 'KERNELSEEK_RESULT_KEY');
  const file = resultKeyFile(config);
  try {
    return await readKeyFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await chmod(path.dirname(file), 0o700);
  // Written whole under another name, then linked into place: when two processes start together,
  // one link wins and both read the same complete key (never a half-written file).
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(temp, `${randomBytes(32).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
  try {
    await link(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await rm(temp, { force: true });
  }
  return readKeyFile(file);
}
