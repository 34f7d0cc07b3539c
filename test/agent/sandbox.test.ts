import { setTimeout as delay } from 'node:timers/promises';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, link, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBashTool } from '../../src/agent/tools/bash-tool.js';
import { executeTool } from '../../src/agent/tools/execute-tool.js';
import { sandboxArgv } from '../../src/agent/tools/sandbox.js';
import type { ToolContext } from '../../src/agent/tools/tool-types.js';
import { commitWorkspace, ensureWorkspace, type Workspace } from '../../src/agent/workspace/workspace.js';
import { loadConfig, REPO_ROOT, type Config } from '../../src/config/index.js';
import { createTempDir } from '../support/db.js';

// Each attack of issue 12 that a command can try on its own, performed through the real bash tool
// (bubblewrap on this host), with a secret in this process's environment to steal.
const SECRET = 'sk-ant-sandbox-test-secret-7731';
let tmp: { dir: string; remove(): Promise<void> };
let ws: Workspace;
let config: Config;
const PATH_ENV = '/usr/local/bin:/usr/bin:/bin';

function ctx(extra: Record<string, string> = {}): ToolContext {
  const c = Object.keys(extra).length ? loadConfig({ ...baseEnv(), ...extra }, { cwd: tmp.dir }) : config;
  return { config: c, workspace: ws, toolUseId: 'toolu_sandbox' } as unknown as ToolContext;
}
const baseEnv = () => ({ KERNELSEEK_DATA_DIR: tmp.dir, PATH: PATH_ENV, ANTHROPIC_API_KEY: SECRET, KERNELSEEK_BASH_TIMEOUT: '20s' });
const bash = (command: string, extra: Record<string, string> = {}) => runBashTool({ command }, ctx(extra));

/** Host processes whose command line contains `marker` (the sandbox's PID namespace hides them from it). */
function hostProcesses(marker: string): string[] {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(marker) && !l.includes('ps -eo'));
}
const sleep = (ms: number) => delay(ms);

beforeAll(async () => {
  tmp = await createTempDir('ks-sandbox-');
  process.env.KS_TEST_PARENT_SECRET = SECRET;
  config = loadConfig(baseEnv(), { cwd: tmp.dir });
  ({ workspace: ws } = await ensureWorkspace({ dataDir: tmp.dir, runId: 'ks-sbx', kernelFile: 'kernel.cpp', pathEnv: PATH_ENV }, async () => ({ source: 'int main() { return 0; }\n', message: 'baseline' })));
  await mkdir(path.join(tmp.dir, 'workspaces', 'other-run'), { recursive: true });
  await writeFile(path.join(tmp.dir, 'workspaces', 'other-run', 'kernel.cpp'), 'other run');
  await writeFile(path.join(tmp.dir, 'pglite-file'), 'embedded db');
});
afterAll(async () => {
  delete process.env.KS_TEST_PARENT_SECRET;
  await tmp.remove();
});

describe('the sandbox keeps secrets, files and services out of reach', () => {
  it('no credential in env, /proc/$PPID/environ or /proc/*/environ; only the sandbox\'s own processes are visible', async () => {
    const r = await bash('env; cat /proc/$PPID/environ; for f in /proc/*/environ; do cat "$f"; echo; done; echo; ps -e -o pid=,args= | wc -l; cat /proc/1/cmdline | tr "\\0" " "');
    expect(r.content).not.toContain(SECRET);
    expect(r.content).not.toMatch(/ANTHROPIC|KS_TEST_PARENT_SECRET|REDIS_URL|DATABASE_URL/);
    // pid 1 is bwrap, the namespace's init: not the service.
    expect(r.content).toMatch(/bwrap/);
  });

  it('the data dir, other runs, the checkout, HOME and host sockets are not there', async () => {
    const targets = [path.join(tmp.dir, 'workspaces', 'other-run', 'kernel.cpp'), path.join(tmp.dir, 'pglite-file'), path.join(REPO_ROOT, 'kernels'), '/root', '/run/postgresql', '/var/run/postgresql', '/tmp/.s.PGSQL.5432', '/etc/shadow'];
    const r = await bash(targets.map((t) => `ls -d ${t} >/dev/null 2>&1 && echo "REACHED ${t}"`).join('; ') + '; ls /');
    expect(r.content).not.toContain('REACHED');
    expect(r.content.split('\n').sort()).toEqual(expect.not.arrayContaining(['root', 'run', 'var']));
  });

  it('TCP to Redis and PostgreSQL on 127.0.0.1 fails (own network namespace)', async () => {
    // Both services listen on this host; the test first shows they are reachable from outside.
    for (const port of [6379, 5432]) execFileSync('bash', ['-c', `exec 3<>/dev/tcp/127.0.0.1/${port}`]);
    const r = await bash('for p in 6379 5432; do (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && echo "CONNECTED $p"; done; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "');
    expect(r.content).not.toContain('CONNECTED');
    expect(r.content.trim()).toBe('lo');
  });

  it('runs as nobody, cannot write the system directories, and /tmp is its own', async () => {
    await writeFile('/tmp/ks-sandbox-host-tmp-probe', 'host');
    const r = await bash('id -u; touch /usr/x 2>&1; touch /etc/passwd 2>&1; ls /tmp; echo mine > /tmp/f; cat /tmp/f');
    expect(r.content.split('\n')[0]).toBe('65534');
    // /usr is a read-only mount; /etc/passwd is a read-only mount's file and not the sandbox user's.
    expect(r.content).toMatch(/\/usr\/x': Read-only file system[\s\S]*\/etc\/passwd': (Read-only file system|Permission denied)/);
    expect(r.content).not.toContain('ks-sandbox-host-tmp-probe');
    expect(existsSync('/tmp/f') && (await readFile('/tmp/f', 'utf8')) === 'mine\n').toBe(false);
    await rm('/tmp/ks-sandbox-host-tmp-probe', { force: true });
  });
});

describe('no process the agent starts outlives its command', () => {
  it('setsid, a double fork and nohup are gone when the command returns', async () => {
    const m = `${7_000_000 + Math.floor(Math.random() * 1e6)}`;
    const r = await bash(`setsid sleep ${m}1 & (sleep ${m}2 &) ; nohup sleep ${m}3 >/dev/null 2>&1 & disown; echo started`);
    expect(r.content).toContain('started');
    await sleep(500);
    expect(hostProcesses(m)).toEqual([]);
  });

  it('and when the command times out', async () => {
    const m = `${8_000_000 + Math.floor(Math.random() * 1e6)}`;
    const r = await bash(`setsid sleep ${m} & sleep 600`, { KERNELSEEK_BASH_TIMEOUT: '1s' });
    expect(r.content).toMatch(/killed after 1 s/);
    await sleep(500);
    expect(hostProcesses(m)).toEqual([]);
  });

  it('and when the process that started the sandbox is killed with SIGKILL (--die-with-parent)', async () => {
    const m = `${9_000_000 + Math.floor(Math.random() * 1e6)}`;
    const argv = sandboxArgv({ workspace: ws.dir, env: { PATH: PATH_ENV }, gpu: false, readOnly: [], limits: { memoryBytes: null, processes: 64, fileBytes: 1 << 20, tmpBytes: 64 << 20 } }, `setsid sleep ${m} & sleep ${m}0`);
    // A stand-in for `kernelseek run`: a node process that starts the sandbox and is then killed -9.
    const parent = spawn(process.execPath, ['-e', `require('child_process').spawn(${JSON.stringify(argv[0])}, ${JSON.stringify(argv.slice(1))}, { stdio: 'ignore' }); setInterval(() => {}, 1000)`], { stdio: 'ignore' });
    for (let i = 0; i < 50 && hostProcesses(`sleep ${m}0`).length === 0; i++) await sleep(100);
    expect(hostProcesses(m).length).toBeGreaterThan(0);
    parent.kill('SIGKILL');
    await sleep(1000);
    expect(hostProcesses(m)).toEqual([]);
  });
});

describe('limits', () => {
  it('a file over the file-size limit and memory over the address-space limit are refused', async () => {
    const r = await bash('head -c 3000000 /dev/zero > big.bin; ls -l big.bin | cut -d" " -f5; /usr/bin/python3 -c "b = bytearray(1 << 30)" 2>&1 | tail -1; rm -f big.bin', { KERNELSEEK_SANDBOX_FILE_MB: '1', KERNELSEEK_SANDBOX_MEMORY_MB: '512' });
    expect(r.content).toMatch(/^1048576$/m);
    expect(r.content).toMatch(/MemoryError/);
  });

  it('processes are capped, also when the service is root (its sandboxes drop to an unprivileged uid)', async () => {
    // The kernel exempts only root from RLIMIT_NPROC; a root service's sandbox is not root.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ks-sandbox-nproc-'));
    await chmod(dir, 0o777);
    const run = (processes: number) => {
      const argv = sandboxArgv({ workspace: dir, env: { PATH: PATH_ENV }, gpu: false, readOnly: [], limits: { memoryBytes: null, processes, fileBytes: 1 << 20, tmpBytes: 64 << 20 } }, 'for i in $(seq 1 40); do sleep 1 & done; wait');
      return spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 60_000 });
    };
    const capped = run(20);
    const roomy = run(200);
    await rm(dir, { recursive: true, force: true });
    expect(capped.stderr).toMatch(/fork: .*Resource temporarily unavailable/);
    expect(roomy.stderr).toBe('');
    expect(roomy.status).toBe(0);
  });

  it('tells the model the limits when a command fails', async () => {
    const r = await bash('exit 4');
    expect(r.content).toMatch(/sandbox limits: .*address space.*, 256 processes, files of at most 1024 MB, \/tmp of 1024 MB; no network/);
  });
});

describe('the agent can still work', () => {
  it('compiles and runs a g++ program in its workspace and runs python3 with torch', async () => {
    const program = '#include <cstdio>\nint main() { std::printf("sum=%d\\n", 40 + 2); }\n';
    await writeFile(path.join(ws.dir, 'hello.cpp'), program);
    const r = await bash('g++ -O2 hello.cpp -o hello && ./hello && /usr/bin/python3 -c "import torch; print(torch.ones(2).sum())"; rm -f hello hello.cpp');
    expect(r.isError).toBe(false);
    expect(r.content).toContain('sum=42');
    expect(r.content).toContain('tensor(2.)');
  });

  it('reads its history and restores a version with git, but cannot write the git directory', async () => {
    await writeFile(path.join(ws.dir, 'kernel.cpp'), 'changed\n');
    const r = await bash('git log --oneline | wc -l; git checkout HEAD -- kernel.cpp && cat kernel.cpp; echo x > .git/hooks-attempt 2>&1 || echo REFUSED');
    expect(r.content).toMatch(/^1$/m);
    expect(r.content).toContain('int main() { return 0; }');
    expect(r.content).toContain('REFUSED');
    expect(existsSync(path.join(ws.gitDir, 'hooks-attempt'))).toBe(false);
  });

  it('output with NUL bytes and invalid UTF-8 comes back storable', async () => {
    const r = await bash("printf 'a\\0b\\xff\\xfec'");
    expect(r.content).not.toContain('\u0000');
    expect(r.content).toContain('a\\0b');
  });
});

describe('files the agent writes never make the engine run code', () => {
  it('hooks, fsmonitor, filters and attributes planted in the work tree do not run on commit', async () => {
    const marker = path.join(tmp.dir, 'HOOK-RAN');
    const sh = `#!/bin/sh\ntouch ${marker}\n`;
    // What bash could plant (.git is read-only inside, so write it from outside, as a worst case).
    await mkdir(path.join(ws.dir, '.git', 'hooks'), { recursive: true });
    for (const hook of ['pre-commit', 'post-commit', 'commit-msg']) await writeFile(path.join(ws.dir, '.git', 'hooks', hook), sh, { mode: 0o755 });
    await writeFile(path.join(ws.dir, '.git', 'config'), `[core]\n\tfsmonitor = "touch ${marker}"\n\thooksPath = .git/hooks\n[filter "x"]\n\tclean = touch ${marker}\n`);
    await writeFile(path.join(ws.dir, '.gitattributes'), '* filter=x\n');
    await writeFile(path.join(ws.dir, 'notes.md'), 'a note\n');
    await commitWorkspace(ws, 'candidate', PATH_ENV, 50 * 2 ** 20);
    expect(existsSync(marker)).toBe(false);
    // The hooks through bash: .git inside is the read-only git directory.
    const r = await bash(`mkdir -p .git/hooks && printf '${sh.replace(/\n/g, '\\n')}' > .git/hooks/post-commit || echo REFUSED`);
    expect(r.content).toContain('REFUSED');
    await commitWorkspace(ws, 'candidate 2', PATH_ENV, 50 * 2 ** 20);
    expect(existsSync(marker)).toBe(false);
  });

  it('a workspace from before the git directory moved out keeps its history and loses what could run code', async () => {
    const dataDir = path.join(tmp.dir, 'legacy');
    const dir = path.join(dataDir, 'workspaces', 'ks-legacy');
    await mkdir(dir, { recursive: true });
    const who = { GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b.invalid', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b.invalid' };
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env: { PATH: PATH_ENV, HOME: dir, ...who }, encoding: 'utf8' });
    git('init', '-q');
    await writeFile(path.join(dir, 'kernel.cpp'), 'old\n');
    git('add', '-A');
    git('commit', '-qm', 'old layout');
    const marker = path.join(tmp.dir, 'LEGACY-HOOK-RAN');
    await writeFile(path.join(dir, '.git', 'hooks', 'post-commit'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    await writeFile(path.join(dir, '.git', 'config'), `[core]\n\tfsmonitor = "touch ${marker}"\n[filter "x"]\n\tclean = touch ${marker}\n`, { flag: 'a' });
    await writeFile(path.join(dir, '.gitattributes'), '* filter=x\n');
    const { workspace, created } = await ensureWorkspace({ dataDir, runId: 'ks-legacy', kernelFile: 'kernel.cpp', pathEnv: PATH_ENV }, () => Promise.reject(new Error('must not reseed')));
    expect(created).toBe(false);
    expect(existsSync(path.join(dir, '.git', 'HEAD'))).toBe(false);
    await writeFile(path.join(dir, 'kernel.cpp'), 'new\n');
    await commitWorkspace(workspace, 'after the move', PATH_ENV, 50 * 2 ** 20);
    expect(existsSync(marker)).toBe(false);
    const log = execFileSync('git', [`--git-dir=${workspace.gitDir}`, 'log', '--format=%s'], { encoding: 'utf8', env: { PATH: PATH_ENV } });
    expect(log.trim().split('\n')).toEqual(['after the move', 'old layout']);
  });

  it('a 200 MB file is refused for commit with a message to the model, and evaluate is refused before it spends an evaluation', async () => {
    const r = await bash('head -c 200000000 /dev/zero > data.bin && ls -l data.bin | cut -d" " -f5');
    expect(r.content).toContain('200000000');
    await expect(commitWorkspace(ws, 'too big', PATH_ENV, 50 * 2 ** 20)).rejects.toThrow(/not committed: it holds 190\.7 MB .*data\.bin/);
    const e = await executeTool('evaluate', {}, { ...ctx(), run: { id: 'ks-sbx', state: {}, evalsUsed: 0, budgetEvals: 5 }, task: { task: { device: 'cpu' } } } as unknown as ToolContext);
    expect(e.isError).toBe(true);
    expect(e.content).toMatch(/data\.bin \(190\.7 MB\)[\s\S]*Delete these files/);
    await bash('rm data.bin');
  });
});

describe('the editor refuses links', () => {
  it('a hard link to a trusted file (made outside) and one made by bash inside are refused for every command', async () => {
    const trusted = path.join(tmp.dir, 'trusted-reference.py');
    await writeFile(trusted, 'TRUSTED\n');
    await link(trusted, path.join(ws.dir, 'ref.py'));
    await bash('ln kernel.cpp kernel-alias.cpp');
    for (const file of ['ref.py', 'kernel-alias.cpp']) {
      for (const input of [
        { command: 'view', path: file },
        { command: 'create', path: file, file_text: 'zeros' },
        { command: 'str_replace', path: file, old_str: 'T', new_str: 'X' },
        { command: 'insert', path: file, insert_line: 0, insert_text: 'x' },
      ]) {
        const r = await executeTool('str_replace_based_edit_tool', input, ctx());
        expect(r).toMatchObject({ isError: true });
        expect(r.content).toMatch(/hard link/);
      }
    }
    expect(await readFile(trusted, 'utf8')).toBe('TRUSTED\n');
    expect((await stat(trusted)).size).toBe(8);
    await bash('rm -f ref.py kernel-alias.cpp');
  });

  it('a symlink, even one pointing inside the workspace, is refused', async () => {
    await symlink('kernel.cpp', path.join(ws.dir, 'inner-link.cpp'));
    await bash('ln -s /etc/passwd passwd-link');
    for (const file of ['inner-link.cpp', 'passwd-link', '/workspace/inner-link.cpp']) {
      const r = await executeTool('str_replace_based_edit_tool', { command: 'create', path: file, file_text: 'x' }, ctx());
      expect(r).toMatchObject({ isError: true });
      expect(r.content).toMatch(/symlink/);
    }
    expect(await readFile(path.join(ws.dir, 'kernel.cpp'), 'utf8')).toContain('int main');
  });
});
