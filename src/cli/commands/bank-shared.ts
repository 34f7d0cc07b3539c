import path from 'node:path';
import { createStore, openDatabase, type Store } from '../../db/index.js';
import { UserInputError } from '../../core/errors.js';
import { DEFAULT_ATTRIBUTION_K, defaultBankDir } from '../../questions/index.js';
import { configOf, type CliContext } from '../context.js';

/** Options of `bank` that its subcommands share (commander hands them down as globals). */
export interface BankGlobalOptions {
  dir?: string;
  json?: boolean;
  k?: string;
}

export function bankDirOf(ctx: CliContext, opts: BankGlobalOptions): string {
  return opts.dir ? path.resolve(ctx.cwd, opts.dir) : defaultBankDir(configOf(ctx).core.repoRoot);
}

export function attributionKOf(opts: BankGlobalOptions): number {
  if (opts.k === undefined) return DEFAULT_ATTRIBUTION_K;
  const k = Number(opts.k);
  if (!Number.isInteger(k) || k < 1) throw new UserInputError(`--k must be a whole number of evaluations (1 or more), got '${opts.k}'.`);
  return k;
}

/** Opens the configured database (migrated), runs `fn`, and always closes it. */
export async function withStore<T>(ctx: CliContext, fn: (store: Store) => Promise<T>): Promise<T> {
  const handle = await openDatabase(configOf(ctx).db);
  try {
    await handle.migrate();
    return await fn(createStore(handle.db));
  } finally {
    await handle.close();
  }
}
