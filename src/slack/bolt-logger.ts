import type { Logger as BoltLogger, LogLevel } from '@slack/bolt';
import type { Logger } from '../core/logger.js';

/** Bolt's logger interface over our pino logger, so Bolt's own messages land in the same log stream. */
export function toBoltLogger(logger: Logger): BoltLogger {
  const child = logger.child({ component: 'bolt' });
  let level = 'info' as LogLevel;
  const join = (msg: unknown[]) => msg.map((m) => (typeof m === 'string' ? m : m instanceof Error ? m.message : JSON.stringify(m))).join(' ');
  return {
    debug: (...msg: unknown[]) => child.debug(join(msg)),
    info: (...msg: unknown[]) => child.info(join(msg)),
    warn: (...msg: unknown[]) => child.warn(join(msg)),
    error: (...msg: unknown[]) => child.error(join(msg)),
    setLevel: (l: LogLevel) => void (level = l),
    getLevel: () => level,
    setName: () => {},
  };
}
