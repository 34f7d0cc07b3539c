import { mkdir, readdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { runKernelseek } from '../support/cli.js';
import { createTempDir } from '../support/db.js';
import { endTurn, reply, toolResultTexts, toolUse } from '../support/anthropic/script.js';
import { startFakeAnthropic, type FakeAnthropic } from '../support/anthropic/server.js';

// Where bubblewrap cannot run, a run gets no command tools (and says why) unless the operator turns
// the sandbox off, which is said too. A PATH of /usr/bin's programs minus bwrap stands in for a
// host without bubblewrap.
let tmp: { dir: string; remove(): Promise<void> };
let server: FakeAnthropic | undefined;
let noBwrap: string;

beforeAll(async () => {
  tmp = await createTempDir('ks-sandbox-unavailable-');
  noBwrap = path.join(tmp.dir, 'bin');
  await mkdir(noBwrap);
  for (const name of await readdir('/usr/bin')) if (name !== 'bwrap') await symlink(path.join('/usr/bin', name), path.join(noBwrap, name));
});
afterAll(async () => {
  await server?.close();
  await tmp.remove();
});

const env = (dataDir: string, extra: Record<string, string> = {}) => ({
  KERNELSEEK_DATA_DIR: dataDir,
  KERNELSEEK_TASKS_DIR: path.join(REPO_ROOT, 'kernels'),
  KERNELSEEK_PYTHON: '/usr/bin/python3',
  ANTHROPIC_BASE_URL: server!.url,
  ANTHROPIC_API_KEY: 'sk-ant-unavailable-test-1',
  KERNELSEEK_MODEL: 'claude-sonnet-4-6',
  PATH: noBwrap,
  USER: 'tester',
  LOG_LEVEL: 'silent',
  ...extra,
});

describe('without bubblewrap', () => {
  it('the run has no bash or gpu_bash, the prompt and the thread say why, and a bash call is refused', { timeout: 200_000 }, async () => {
    server = await startFakeAnthropic({ script: [reply(toolUse('bash', { command: 'echo RAN-UNCONFINED' })), endTurn('done')] });
    const r = await runKernelseek(['run', 'cpu_softmax', '--autonomous', '--scenarios', 'quick', '--budget-steps', '2'], env(path.join(tmp.dir, 'a')), { cwd: tmp.dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/no command tools \(bash, gpu_bash\): the sandbox is unavailable \(bubblewrap failed: .*bwrap/);
    const first = server.requests[0]!.body as unknown as { tools: { name: string }[]; system: unknown };
    expect(first.tools.map((t) => t.name)).toEqual(['str_replace_based_edit_tool', 'evaluate']);
    expect(JSON.stringify(first.system)).toMatch(/bash and gpu_bash are not available on this host/);
    const [result] = toolResultTexts(server.requests[1]!);
    expect(result).toMatch(/Commands are disabled on this host: the sandbox they must run in is unavailable/);
    expect(result).not.toContain('RAN-UNCONFINED');
  });

  it('KERNELSEEK_SANDBOX=off runs commands unconfined, with a warning in the thread', { timeout: 200_000 }, async () => {
    await server?.close();
    server = await startFakeAnthropic({ script: [reply(toolUse('bash', { command: 'echo RAN-UNCONFINED; pwd' })), endTurn('done')] });
    const r = await runKernelseek(['run', 'cpu_softmax', '--autonomous', '--scenarios', 'quick', '--budget-steps', '2'], env(path.join(tmp.dir, 'b'), { KERNELSEEK_SANDBOX: 'off' }), { cwd: tmp.dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/KERNELSEEK_SANDBOX=off: the agent's commands run unconfined/);
    const [result] = toolResultTexts(server.requests[1]!);
    expect(result).toContain('RAN-UNCONFINED');
    expect(result).toContain(path.join(tmp.dir, 'b', 'workspaces'));
  });
});
