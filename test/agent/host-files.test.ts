import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeTool } from '../../src/agent/tools/execute-tool.js';
import type { ToolContext } from '../../src/agent/tools/tool-types.js';
import { ensureWorkspace, type Workspace } from '../../src/agent/workspace/workspace.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { createTempDir } from '../support/db.js';

// Issue 39: the host (this process, root here) reads what a sandbox wrote. A kernel file that is a
// symlink, a FIFO, a device, too big, or not text must come back to the model as a clear error,
// with none of the target's bytes, without blocking and without touching the store.
const PATH_ENV = '/usr/local/bin:/usr/bin:/bin';
let tmp: { dir: string; remove(): Promise<void> };
let ws: Workspace;
let config: Config;

/** What the host itself would leak: its own environment and /etc/shadow, as lines to look for. */
function hostSecrets(): string[] {
  const environ = readFileSync('/proc/self/environ', 'latin1').split('\0').filter((e) => e.length >= 12);
  const shadow = readFileSync('/etc/shadow', 'utf8').split('\n').filter((l) => l.length >= 8);
  expect(environ.length).toBeGreaterThan(0);
  expect(shadow.length).toBeGreaterThan(0);
  return [...environ, ...shadow];
}

/** A context whose store and dispatcher fail loudly: a refused kernel must never reach them. */
function evaluateCtx(): ToolContext {
  const untouchable = new Proxy({}, { get: (_t, key) => { throw new Error(`the store/dispatcher was used (${String(key)}) for a refused kernel`); } });
  return {
    config,
    workspace: ws,
    toolUseId: 'toolu_host_files',
    run: { id: 'ks-host-files', state: {}, evalsUsed: 0, budgetEvals: 5 },
    task: { task: { name: 'cpu_softmax', device: 'cpu', kernel: { file: 'kernel.cpp' } } },
    store: untouchable,
    dispatcher: untouchable,
  } as unknown as ToolContext;
}

const kernel = () => path.join(ws.dir, 'kernel.cpp');
async function replaceKernel(make: (file: string) => unknown): Promise<void> {
  await rm(kernel(), { recursive: true, force: true });
  await make(kernel());
}

beforeAll(async () => {
  tmp = await createTempDir('ks-host-files-');
  config = loadConfig({ KERNELSEEK_DATA_DIR: tmp.dir, PATH: PATH_ENV }, { cwd: tmp.dir });
  ({ workspace: ws } = await ensureWorkspace({ dataDir: tmp.dir, runId: 'ks-host-files', kernelFile: 'kernel.cpp', pathEnv: PATH_ENV }, async () => ({ source: 'int main() { return 0; }\n', message: 'baseline' })));
});
afterAll(() => tmp.remove());

describe('evaluate reads the kernel file without following what the agent made of it', () => {
  it('a symlink to /proc/self/environ or /etc/shadow is refused, and none of the target reaches the result', async () => {
    const secrets = hostSecrets();
    for (const target of ['/proc/self/environ', '/etc/shadow']) {
      await replaceKernel((f) => symlink(target, f));
      const r = await executeTool('evaluate', {}, evaluateCtx());
      expect(r.isError).toBe(true);
      expect(r.content).toMatch(/kernel\.cpp is a symlink/);
      for (const s of secrets) expect(r.content).not.toContain(s);
    }
  });

  it('a FIFO is refused at once (nothing blocks)', async () => {
    await replaceKernel((f) => execFileSync('mkfifo', [f]));
    const started = Date.now();
    const r = await Promise.race([executeTool('evaluate', {}, evaluateCtx()), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('evaluate blocked on a FIFO')), 5000))]);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r).toMatchObject({ isError: true, content: expect.stringMatching(/FIFO/) });
  });

  it('a device file (a copy of /dev/zero) is refused without being read', async () => {
    await replaceKernel((f) => execFileSync('mknod', [f, 'c', '1', '5']));
    const r = await executeTool('evaluate', {}, evaluateCtx());
    expect(r).toMatchObject({ isError: true, content: expect.stringMatching(/device file/) });
  });

  it('a file over the source cap is refused with its size and the cap', async () => {
    await replaceKernel((f) => writeFile(f, `// ${'x'.repeat(2 * 2 ** 20)}\nint main() {}\n`));
    const r = await executeTool('evaluate', {}, evaluateCtx());
    expect(r).toMatchObject({ isError: true, content: expect.stringMatching(/kernel\.cpp is \d+ bytes; at most 1048576 are read/) });
  });

  it('a kernel with a NUL byte or invalid UTF-8 gets a clear error (never a raw SQL error)', async () => {
    await replaceKernel((f) => writeFile(f, Buffer.from('int main() {\n  return 0;\0\n}\n', 'latin1')));
    const nul = await executeTool('evaluate', {}, evaluateCtx());
    expect(nul).toMatchObject({ isError: true, content: expect.stringMatching(/contains a NUL byte \(line 2/) });
    await replaceKernel((f) => writeFile(f, Buffer.from([0x69, 0x6e, 0x74, 0x0a, 0xff, 0xfe, 0x0a])));
    const latin = await executeTool('evaluate', {}, evaluateCtx());
    expect(latin).toMatchObject({ isError: true, content: expect.stringMatching(/not valid UTF-8 \(line 2, byte 4\)/) });
  });

  it('a hard link to a file outside the workspace is refused', async () => {
    const outside = path.join(tmp.dir, 'trusted.cpp');
    await writeFile(outside, 'TRUSTED\n');
    await replaceKernel((f) => execFileSync('ln', [outside, f]));
    const r = await executeTool('evaluate', {}, evaluateCtx());
    expect(r).toMatchObject({ isError: true, content: expect.stringMatching(/hard links/) });
    expect(r.content).not.toContain('TRUSTED');
  });
});

describe('the editor reads the same way', () => {
  it('a symlinked folder on the way, a FIFO and a device are refused; nothing blocks', async () => {
    await mkdir(path.join(ws.dir, 'sub'), { recursive: true });
    await symlink('/etc', path.join(ws.dir, 'etc-link'));
    execFileSync('mkfifo', [path.join(ws.dir, 'sub', 'pipe')]);
    execFileSync('mknod', [path.join(ws.dir, 'sub', 'zero'), 'c', '1', '5']);
    const secrets = hostSecrets();
    for (const [file, why] of [['etc-link/shadow', /symlink/], ['sub/pipe', /FIFO|not a regular file/], ['sub/zero', /device|not a regular file/]] as const) {
      const r = await executeTool('str_replace_based_edit_tool', { command: 'view', path: file }, { config, workspace: ws, toolUseId: 't' } as unknown as ToolContext);
      expect(r.isError).toBe(true);
      expect(r.content).toMatch(why);
      for (const s of secrets) expect(r.content).not.toContain(s);
    }
  });

  it('a file with NUL bytes is refused for view and edit, and left as it was', async () => {
    const file = path.join(ws.dir, 'bin.dat');
    await writeFile(file, Buffer.from('a\0b\n'));
    for (const input of [{ command: 'view', path: 'bin.dat' }, { command: 'str_replace', path: 'bin.dat', old_str: 'a', new_str: 'c' }]) {
      const r = await executeTool('str_replace_based_edit_tool', input, { config, workspace: ws, toolUseId: 't' } as unknown as ToolContext);
      expect(r).toMatchObject({ isError: true, content: expect.stringMatching(/NUL byte/) });
    }
    expect(await readFile(file)).toEqual(Buffer.from('a\0b\n'));
  });
});
