import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bashSandbox } from '../../src/agent/tools/agent-sandbox.js';
import { runBashTool } from '../../src/agent/tools/bash-tool.js';
import { executeTool } from '../../src/agent/tools/execute-tool.js';
import { SANDBOX_HOST_UIDS, sandboxArgv, sandboxOwner } from '../../src/agent/tools/sandbox.js';
import type { ToolContext } from '../../src/agent/tools/tool-types.js';
import { checkWorkspaceSize, ensureWorkspace, type Workspace } from '../../src/agent/workspace/workspace.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { createTempDir } from '../support/db.js';

// Issue 39: the service runs as root here (as in a container). A command in its sandbox must not be
// host root: no host sysctl, no nested user namespace, no descriptor of the service, no host path
// in its mount points, RAM-backed folders with a size, and no file that escapes the workspace cap.
const PATH_ENV = '/usr/local/bin:/usr/bin:/bin';
let tmp: { dir: string; remove(): Promise<void> };
let ws: Workspace;
let config: Config;

const ctx = (extra: Record<string, string> = {}) =>
  ({ config: Object.keys(extra).length ? loadConfig({ ...baseEnv(), ...extra }, { cwd: tmp.dir }) : config, workspace: ws, toolUseId: 'toolu_root' }) as unknown as ToolContext;
const baseEnv = () => ({ KERNELSEEK_DATA_DIR: tmp.dir, PATH: PATH_ENV, KERNELSEEK_BASH_TIMEOUT: '30s' });
const bash = (command: string, extra: Record<string, string> = {}) => runBashTool({ command }, ctx(extra));

beforeAll(async () => {
  tmp = await createTempDir('ks-sandbox-root-');
  config = loadConfig(baseEnv(), { cwd: tmp.dir });
  ({ workspace: ws } = await ensureWorkspace({ dataDir: tmp.dir, runId: 'ks-root', kernelFile: 'kernel.cpp', pathEnv: PATH_ENV }, async () => ({ source: 'int main() { return 0; }\n', message: 'baseline' })));
});
afterAll(() => tmp.remove());

describe('a sandbox started by a root service is not root on the host', () => {
  it('the service is root here (otherwise these attacks would prove nothing)', () => {
    expect(process.getuid?.()).toBe(0);
  });

  it('cannot write a host sysctl or open core_pattern for writing', async () => {
    // Writes back the value it read: harmless when refused, and harmless when (wrongly) allowed.
    const r = await bash(
      'v=$(cat /proc/sys/vm/stat_interval); echo "$v" > /proc/sys/vm/stat_interval && echo WROTE-STAT-INTERVAL; ' +
        ': >> /proc/sys/kernel/core_pattern && echo OPENED-CORE-PATTERN; ' +
        'h=$(cat /proc/sys/kernel/hostname); echo "$h" > /proc/sys/kernel/hostname && echo WROTE-HOSTNAME; echo done',
    );
    expect(r.content).toContain('done');
    expect(r.content).not.toMatch(/WROTE-|OPENED-/);
  });

  it('cannot make a user namespace of its own', async () => {
    const r = await bash('unshare -U true && echo NESTED-USERNS; unshare -Ur id && echo NESTED-ROOT; echo done');
    expect(r.content).toContain('done');
    expect(r.content).not.toMatch(/NESTED-/);
  });

  it('writes its workspace and HOME, and what it writes is the run\'s own uid\'s on the host, not root\'s', async () => {
    const r = await bash('echo mine > made-inside.txt && echo ok > ~/home-file && echo WROTE');
    expect(r.content).toContain('WROTE');
    const st = spawnSync('stat', ['-c', '%u', path.join(ws.dir, 'made-inside.txt'), path.join(ws.homeDir, 'home-file')], { encoding: 'utf8' });
    // A uid of the run's own, not root and not nobody (whose process count every sandbox would share).
    const uid = sandboxOwner(ws.runId)!.uid;
    expect(uid).toBeGreaterThanOrEqual(SANDBOX_HOST_UIDS.first);
    expect(st.stdout.trim().split('\n')).toEqual([String(uid), String(uid)]);
    // The data dir sits in a folder only root may pass (mkdtemp, 0700): staged in a mount namespace
    // of the sandbox's own, nothing of which is left in the host's mount table.
    expect(statSync(tmp.dir).mode & 0o077).toBe(0);
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toMatch(/kernelseek-sandbox-stage/);
  });

  it('no mount point inside names a host path of the data dir; the folder bound is named only as the root of its bind', async () => {
    const r = await bash('cat /proc/self/mountinfo');
    const lines = r.content.split('\n').filter(Boolean).map((line) => line.split(' '));
    expect(lines.map((f) => f[4])).toContain('/workspace');
    expect(lines.filter((f) => f[4]?.includes(tmp.dir) || f.slice(5).some((x) => x.includes(tmp.dir)))).toEqual([]);
    // The kernel shows a bind mount's root as its path within its filesystem (field 4): no bind can
    // change that; docs/agent.md says so (a data dir on a filesystem of its own shows only /workspaces/<run>).
    expect(lines.filter((f) => f[3]?.includes(tmp.dir)).map((f) => f[4]).sort()).toEqual(['/home/agent', '/workspace', '/workspace/.git']);
  });
});

describe('descriptors of the service do not reach the sandbox', () => {
  it('an inherited folder and file descriptor are closed before bwrap: nothing read, nothing written through them', async () => {
    const outside = path.join(tmp.dir, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'secret.txt'), 'SERVICE-SECRET-4471\n');
    const dirFd = openSync(outside, 'r');
    const fileFd = openSync(path.join(outside, 'secret.txt'), 'r');
    try {
      const argv = sandboxArgv(bashSandbox(config, ws), 'ls /proc/self/fd | tr "\\n" " "; echo; cat <&3; cat <&4; echo pwn > /proc/self/fd/3/pwned && echo WROTE-THROUGH-FD; echo done');
      // Node gives a child exactly these: fd 3 and 4 as if the service had them without close-on-exec.
      const r = spawnSync(argv[0]!, argv.slice(1), { cwd: ws.dir, env: { PATH: PATH_ENV }, encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'pipe', dirFd, fileFd] });
      expect(r.stdout).toContain('done');
      expect(r.stdout + r.stderr).not.toContain('SERVICE-SECRET-4471');
      expect(r.stdout).not.toContain('WROTE-THROUGH-FD');
      expect(existsSync(path.join(outside, 'pwned'))).toBe(false);
      // Only stdio (and ls's own listing descriptor) are open inside.
      expect(r.stdout.split('\n')[0]!.trim().split(' ').map(Number).filter((n) => n > 3)).toEqual([]);
    } finally {
      closeSync(dirFd);
      closeSync(fileFd);
    }
  });
});

describe('caps', () => {
  it('/tmp and /dev/shm are RAM with a size: filling them stops at the cap; /dev takes no files', async () => {
    const r = await bash('for d in /tmp /dev/shm; do head -c 20000000 /dev/zero > $d/fill 2>/dev/null; stat -c "%s" $d/fill; done; echo x > /dev/fill 2>/dev/null || echo DEV-REFUSED', { KERNELSEEK_SANDBOX_TMP_MB: '8' });
    const [tmpSize, shmSize] = r.content.split('\n').slice(0, 2).map(Number);
    expect(tmpSize).toBeGreaterThan(0);
    expect(tmpSize).toBeLessThanOrEqual(8 * 2 ** 20);
    expect(shmSize).toBeLessThanOrEqual(8 * 2 ** 20);
    expect(r.content).toContain('DEV-REFUSED');
  });

  it('a file hidden by .gitignore, or by an excludes file in HOME, still counts against the workspace cap', async () => {
    const r = await bash('printf "*.bin\\n" >> .gitignore; mkdir -p ~/.config/git && printf "hidden/\\n" > ~/.config/git/ignore; mkdir -p hidden; head -c 30000000 /dev/zero > ignored.bin; head -c 30000000 /dev/zero > hidden/data; echo WROTE');
    expect(r.content).toContain('WROTE');
    await expect(checkWorkspaceSize(ws, 50 * 2 ** 20, PATH_ENV)).rejects.toThrow(/not committed: it holds 57\.2 MB .*(ignored\.bin|hidden\/data)/);
    const e = await executeTool('evaluate', {}, { ...ctx(), run: { id: 'ks-root', state: {}, evalsUsed: 0, budgetEvals: 5 }, task: { task: { device: 'cpu' } } } as unknown as ToolContext);
    expect(e).toMatchObject({ isError: true, content: expect.stringMatching(/every file counted, ignored or not/) });
    await bash('rm -rf ignored.bin hidden ~/.config');
    await expect(checkWorkspaceSize(ws, 50 * 2 ** 20, PATH_ENV)).resolves.toBeUndefined();
  });
});
