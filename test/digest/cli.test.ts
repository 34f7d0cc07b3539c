import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartPixelSize, computeDigest } from '../../src/digest/index.js';
import { runKernelseek } from '../support/cli.js';
import { createTempDir, createTestDatabase, type TestDatabase } from '../support/db.js';
import { startFakeSlack } from './fake-slack.js';
import { decodePng } from './png.js';
import { seedDigestScenario, WINDOW } from './scenario.js';

describe('kernelseek digest', () => {
  let t: TestDatabase;
  let env: Record<string, string>;
  const until = ['--since', '24h', '--until', '2026-03-14T09:00:00Z'];

  beforeAll(async () => {
    t = await createTestDatabase('postgres');
    await seedDigestScenario(t.store);
    env = { DATABASE_URL: t.url!, LOG_LEVEL: 'silent' };
  });
  afterAll(async () => {
    await t.dispose();
  });

  it('prints the digest of a window in the terminal', async () => {
    const r = await runKernelseek(['digest', '--print', ...until, '--tz', 'Europe/Berlin'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('KernelSeek digest — 24 h to Sat 14 Mar, 10:00 CET');
    expect(r.stdout).toMatch(/^Runs +2 active, 3 started, 1 finished, 1 stopped, 1 failed$/m);
    expect(r.stdout).toMatch(/^ {2}rmsnorm \(sm_90\) +1\.50x +0\.88x +torch_compile +up from 1\.25x +ks-run1 +4 +2 +63 s +\$0\.88$/m);
    // Attribution was brought up to date first: run 2 has ended, so its question's gain is final.
    expect(r.stdout).toMatch(/^ {2}1\.50x +ks-run2 +rmsnorm +bank:layer-memory +"Which layer of the memory hierarchy is the kernel waiting on\?"$/m);
    expect(r.stdout).not.toContain('so far');
  });

  it('prints the same figures as JSON', async () => {
    const r = await runKernelseek(['digest', '--json', ...until], env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(await computeDigest(t.store, WINDOW));
  });

  it('writes the chart to a PNG file', async () => {
    const tmp = await createTempDir();
    try {
      const r = await runKernelseek(['digest', ...until, '--chart', 'chart.png'], env, { cwd: tmp.dir });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain(`Chart written to ${path.join(tmp.dir, 'chart.png')}.`);
      const png = decodePng(await readFile(path.join(tmp.dir, 'chart.png')));
      expect({ width: png.width, height: png.height }).toEqual(chartPixelSize({}));
    } finally {
      await tmp.remove();
    }
  });

  it('posts the digest to Slack now with --post', async () => {
    const slack = await startFakeSlack();
    try {
      const r = await runKernelseek(['digest', '--post'], { ...env, SLACK_BOT_TOKEN: 'xoxb-cli', SLACK_API_URL: slack.url, DIGEST_CHANNEL: 'C0DIGEST' });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`Posted the digest to C0DIGEST (message ${slack.messages[0]!.ts}); chart not needed (nothing to draw).\n`);
      expect(slack.calls[0]).toMatchObject({ method: 'chat.postMessage', token: 'xoxb-cli', args: { channel: 'C0DIGEST' } });
    } finally {
      await slack.close();
    }
  });

  it('says precisely what is wrong with its input', async () => {
    const cases: [string[], Record<string, string>, string][] = [
      [['digest', '--since', 'yesterday'], {}, 'error: --since must be a positive duration such as 24h, 90m or 7d (got "yesterday")'],
      [['digest', '--since', '0h'], {}, 'error: --since must be a positive duration such as 24h, 90m or 7d (got "0h")'],
      [['digest', '--until', 'noon'], {}, 'error: --until must be a date and time such as 2026-03-14T09:00Z (got "noon")'],
      [['digest', '--tz', 'Mars/Olympus'], {}, 'error: --tz must be an IANA time zone such as UTC or Europe/Berlin (got "Mars/Olympus")'],
      [['digest', '--post'], {}, 'error: --post needs a channel: set DIGEST_CHANNEL or pass --channel C012AB3CD'],
      [['digest', '--post', '--channel', '#general'], {}, 'error: --channel must be a Slack channel id such as C012AB3CD (got "#general")'],
    ];
    for (const [args, extra, message] of cases) {
      const r = await runKernelseek(args, { ...env, ...extra });
      expect({ args, code: r.code, stderr: r.stderr.trim() }).toEqual({ args, code: 1, stderr: message });
    }
    const noToken = await runKernelseek(['digest', '--post', '--channel', 'C0DIGEST'], env);
    expect(noToken.code).toBe(78);
    expect(noToken.stderr).toContain('SLACK_BOT_TOKEN: must be set to post the digest to Slack');
  });
});
