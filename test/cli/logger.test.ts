import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';

/** Logs one line through createLogger in a child process and returns what reached its stderr. */
async function logLine(pretty: boolean | undefined): Promise<string> {
  const script = `import { createLogger } from ${JSON.stringify(path.join(REPO_ROOT, 'src/core/logger.ts'))};
createLogger('info', { name: 'run' }${pretty === undefined ? '' : `, { pretty: ${pretty} }`}).info({ evals: 3 }, 'evaluation finished');`;
  const r = await execa(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: REPO_ROOT, env: { NO_COLOR: '1' } });
  // eslint-disable-next-line no-control-regex -- colours, if the library chose them, are not the point
  return r.stderr.replace(/\x1b\[[0-9;]*m/g, '');
}

describe('createLogger', () => {
  it('writes readable lines for a person (pino-pretty) and one JSON object a line otherwise', async () => {
    const readable = await logLine(true);
    expect(readable).toMatch(/INFO.*\(run\): evaluation finished\n\s+evals: 3/);
    expect(() => JSON.parse(readable)).toThrow();
    const json = JSON.parse(await logLine(false)) as Record<string, unknown>;
    expect(json).toMatchObject({ level: 30, name: 'run', evals: 3, msg: 'evaluation finished' });
    // stderr is a pipe here, not a terminal: the default is JSON.
    expect(JSON.parse(await logLine(undefined))).toMatchObject({ msg: 'evaluation finished' });
  });
});
