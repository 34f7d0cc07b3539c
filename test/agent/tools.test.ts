import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/index.js';
import { runBashTool } from '../../src/agent/tools/bash-tool.js';
import { executeTool } from '../../src/agent/tools/execute-tool.js';
import { OutputCap } from '../../src/agent/tools/output-cap.js';
import { resolveInWorkspace, ToolInputError } from '../../src/agent/tools/paths.js';
import { sandboxEnvironment } from '../../src/agent/tools/sandbox.js';
import type { ToolContext } from '../../src/agent/tools/tool-types.js';
import { ensureWorkspace, type Workspace } from '../../src/agent/workspace/workspace.js';
import { createTempDir } from '../support/db.js';

let tmp: { dir: string; remove(): Promise<void> };
let ws: Workspace;
let config: Config;

function ctx(overrides: Partial<Config['agent']['bash']> = {}): ToolContext {
  const c = { ...config, agent: { ...config.agent, bash: { ...config.agent.bash, ...overrides } } };
  return { config: c, workspace: ws, toolUseId: 'toolu_test' } as unknown as ToolContext;
}

beforeAll(async () => {
  tmp = await createTempDir('ks-tools-');
  config = loadConfig(
    { KERNELSEEK_DATA_DIR: tmp.dir, PATH: '/usr/local/bin:/usr/bin:/bin', ANTHROPIC_API_KEY: 'sk-ant-secret-value-123', KERNELSEEK_BASH_TIMEOUT: '2s', KERNELSEEK_BASH_OUTPUT_CAP: '400' },
    { cwd: tmp.dir },
  );
  ({ workspace: ws } = await ensureWorkspace({ dataDir: tmp.dir, runId: 'ks-tools', kernelFile: 'kernel.cpp', pathEnv: '/usr/bin:/bin' }, async () => ({ source: 'int main() { return 0; }\n', message: 'baseline' })));
  await mkdir(path.join(tmp.dir, 'outside'), { recursive: true });
  await writeFile(path.join(tmp.dir, 'outside', 'secret.txt'), 'top secret');
});
afterAll(() => tmp.remove());

describe('workspace confinement', () => {
  it('accepts relative and absolute paths inside the workspace', async () => {
    expect(await resolveInWorkspace(ws.dir, 'kernel.cpp')).toBe(path.join(ws.dir, 'kernel.cpp'));
    expect(await resolveInWorkspace(ws.dir, path.join(ws.dir, 'notes', 'new.md'))).toBe(path.join(ws.dir, 'notes', 'new.md'));
  });

  it('refuses absolute paths elsewhere, .. escapes and symlinks that lead out', async () => {
    await expect(resolveInWorkspace(ws.dir, '/etc/passwd')).rejects.toBeInstanceOf(ToolInputError);
    await expect(resolveInWorkspace(ws.dir, '../../outside/secret.txt')).rejects.toThrow(/outside the workspace/);
    await expect(resolveInWorkspace(ws.dir, 'sub/../../x')).rejects.toThrow(/outside the workspace/);
    await symlink(path.join(tmp.dir, 'outside', 'secret.txt'), path.join(ws.dir, 'link.txt'));
    await symlink(path.join(tmp.dir, 'outside'), path.join(ws.dir, 'linkdir'));
    await expect(resolveInWorkspace(ws.dir, 'link.txt')).rejects.toThrow(/through a symlink/);
    // A file that does not exist yet, under a symlinked folder that leads out.
    await expect(resolveInWorkspace(ws.dir, 'linkdir/new-file.txt')).rejects.toThrow(/through a symlink/);
    // The workspace as the sandboxed commands see it.
    expect(await resolveInWorkspace(ws.dir, '/workspace/kernel.cpp')).toBe(path.join(ws.dir, 'kernel.cpp'));
    await expect(resolveInWorkspace(ws.dir, '/workspace/../etc/passwd')).rejects.toBeInstanceOf(ToolInputError);
  });

  it('the editor tool returns those refusals to the model as error results and writes nothing', async () => {
    const r = await executeTool('str_replace_based_edit_tool', { command: 'create', path: 'linkdir/evil.txt', file_text: 'x' }, ctx());
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/symlink/);
    const v = await executeTool('str_replace_based_edit_tool', { command: 'view', path: '/etc/hostname' }, ctx());
    expect(v).toMatchObject({ isError: true });
  });
});

describe('text editor', () => {
  it('views with line numbers, replaces a unique string, inserts, and refuses ambiguous edits', async () => {
    const c = ctx();
    const file = path.join(ws.dir, 'k.cu');
    expect((await executeTool('str_replace_based_edit_tool', { command: 'create', path: file, file_text: 'a\nb\nb\nc' }, c)).isError).toBe(false);
    const view = await executeTool('str_replace_based_edit_tool', { command: 'view', path: 'k.cu', view_range: [2, -1] }, c);
    expect(view.content).toBe('     2\tb\n     3\tb\n     4\tc');
    const ambiguous = await executeTool('str_replace_based_edit_tool', { command: 'str_replace', path: 'k.cu', old_str: 'b', new_str: 'B' }, c);
    expect(ambiguous).toMatchObject({ isError: true });
    expect(ambiguous.content).toMatch(/occurs 2 times/);
    const ok = await executeTool('str_replace_based_edit_tool', { command: 'str_replace', path: 'k.cu', old_str: 'b\nc', new_str: 'C' }, c);
    expect(ok.isError).toBe(false);
    await executeTool('str_replace_based_edit_tool', { command: 'insert', path: 'k.cu', insert_line: 0, insert_text: 'top' }, c);
    expect(await readFile(file, 'utf8')).toBe('top\na\nb\nC');
    const missing = await executeTool('str_replace_based_edit_tool', { command: 'str_replace', path: 'k.cu', old_str: 'zzz', new_str: '' }, c);
    expect(missing.content).toMatch(/No match/);
  });
});

describe('bash', () => {
  it('runs in the workspace with a scrubbed environment (no API key), its own HOME', async () => {
    const r = await runBashTool({ command: 'pwd; env | sort' }, ctx());
    expect(r.isError).toBe(false);
    expect(r.content.split('\n')[0]).toBe('/workspace');
    expect(r.content).not.toContain('sk-ant-secret-value-123');
    expect(r.content).not.toMatch(/ANTHROPIC|DATABASE_URL|SLACK/);
    expect(r.content).toContain('HOME=/home/agent');
    const names = r.content.split('\n').slice(1).filter(Boolean).map((l) => l.split('=')[0]);
    for (const name of names) expect(['PATH', 'HOME', 'TMPDIR', 'LANG', 'TERM', 'PWD', 'SHLVL', '_', 'OLDPWD', 'GIT_INDEX_FILE']).toContain(name);
  });

  it('kills the command and everything it started at the time limit', async () => {
    const started = Date.now();
    const r = await runBashTool({ command: '(sleep 30; echo late > late.txt) & sleep 30' }, ctx({ timeoutSeconds: 1 }));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/killed after 1 s/);
    await new Promise((res) => setTimeout(res, 300));
    await expect(readFile(path.join(ws.dir, 'late.txt'))).rejects.toThrow();
  });

  it('caps long output, keeping its head and tail', async () => {
    const r = await runBashTool({ command: 'echo START; for i in $(seq 1 500); do echo line-$i; done; echo END' }, ctx());
    expect(r.content.startsWith('START')).toBe(true);
    expect(r.content).toMatch(/characters omitted/);
    expect(r.content.trimEnd().endsWith('END')).toBe(true);
    expect(r.content.length).toBeLessThan(600);
  });

  it('reports a non-zero exit status as an error result', async () => {
    const r = await runBashTool({ command: 'echo oops >&2; exit 3' }, ctx());
    expect(r).toMatchObject({ isError: true });
    expect(r.content).toMatch(/oops[\s\S]*exit status 3/);
  });

  it('has no network', async () => {
    // /proc/net/dev lists the interfaces of the command's own network namespace.
    const r = await runBashTool({ command: "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '" }, ctx());
    expect(r.content.trim()).toBe('lo');
  });

  it('puts only the passthrough variables, HOME and tool folders in the environment', () => {
    const env = sandboxEnvironment(config.agent.bash.env, { python: '/opt/py/bin/python3', nvcc: 'nvcc' });
    expect(env.PATH).toBe('/usr/local/bin:/usr/bin:/bin:/opt/py/bin');
    expect(Object.keys(env).sort()).toEqual(['HOME', 'LANG', 'PATH', 'TERM', 'TMPDIR']);
  });
});

describe('output cap', () => {
  it('keeps everything under the cap and marks what it dropped above it', () => {
    const small = new OutputCap(10);
    small.push('12345');
    small.push('678');
    expect(small.text()).toBe('12345678');
    const big = new OutputCap(10);
    for (const c of 'abcdefghijklmnopqrstuvwxyz') big.push(c);
    expect(big.text()).toBe('abcde\n[... 16 characters omitted ...]\nvwxyz');
  });
});
