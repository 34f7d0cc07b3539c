import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { COMMANDS, invokedCommand } from '../../src/cli/program.js';
import { runKernelseek } from '../support/cli.js';
import { staticPackages } from '../support/static-imports.js';

describe('kernelseek start-up', () => {
  it('loads only commander and node built-ins before a command is chosen (--help, --version)', async () => {
    const { packages, files } = await staticPackages(path.join(REPO_ROOT, 'src/cli/main.ts'));
    expect([...packages].filter((p) => !p.startsWith('node:')), `loaded by ${files.join(', ')}`).toEqual(['commander']);
    // The walk itself works: a command module does reach the heavy libraries.
    expect([...(await staticPackages(path.join(REPO_ROOT, 'src/cli/commands/serve.ts'))).packages]).toEqual(expect.arrayContaining(['@slack/bolt', 'bullmq']));
  });

  it('loads BullMQ and ioredis for `eval` only with --remote (they are imported when it is given)', async () => {
    const { packages, files } = await staticPackages(path.join(REPO_ROOT, 'src/cli/commands/eval.ts'));
    expect([...packages].filter((p) => p === 'bullmq' || p === 'ioredis'), `loaded by ${files.join(', ')}`).toEqual([]);
    // The harness and the in-process dispatcher are loaded: the walk does follow the command.
    expect(files).toEqual(expect.arrayContaining(['src/queue/in-process-dispatcher.ts', 'src/harness/runner.ts']));
  });

  it('loads neither BullMQ nor ioredis for `run` and `runs` (the local agent evaluates in process)', async () => {
    for (const command of ['run', 'runs']) {
      const { packages, files } = await staticPackages(path.join(REPO_ROOT, `src/cli/commands/${command}.ts`));
      expect([...packages].filter((p) => p === 'bullmq' || p === 'ioredis'), `${command} loaded by ${files.join(', ')}`).toEqual([]);
    }
    // `run` prints its first line before it loads the agent (issue 42): what it then imports is
    // src/agent/terminal.ts, which holds the local agent and no BullMQ either.
    const run = await staticPackages(path.join(REPO_ROOT, 'src/cli/commands/run.ts'));
    expect(run.files).not.toContain('src/agent/local.ts');
    expect(run.packages.has('@anthropic-ai/sdk')).toBe(false);
    const agent = await staticPackages(path.join(REPO_ROOT, 'src/agent/terminal.ts'));
    expect([...agent.packages].filter((p) => p === 'bullmq' || p === 'ioredis')).toEqual([]);
    expect(agent.files).toEqual(expect.arrayContaining(['src/agent/local.ts', 'src/queue/in-process-dispatcher.ts']));
  });

  it('finds the command a command line runs', () => {
    expect(invokedCommand(['--help'])).toBeUndefined();
    expect(invokedCommand(['eval', 'cpu_softmax', 'k.cpp', '--json'])).toBe('eval');
    expect(invokedCommand(['help', 'tasks'])).toBe('tasks');
    expect(invokedCommand(['-h', 'bank', 'lint'])).toBe('bank');
  });

  it("lists each command in the help with the same arguments and summary its module declares", async () => {
    for (const entry of COMMANDS) {
      const program = new Command('kernelseek');
      (await entry.load())(program, { env: {}, cwd: REPO_ROOT } as never);
      const cmd = program.commands.find((c) => c.name() === entry.name);
      expect(cmd, entry.name).toBeDefined();
      expect(cmd!.description(), entry.name).toBe(entry.summary);
      expect(cmd!.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`)).join(' '), entry.name).toBe(entry.args);
    }
  });

  it('shows every command in --help and a command in full with its options', async () => {
    const top = await runKernelseek(['--help'], {});
    expect(top.code).toBe(0);
    for (const entry of COMMANDS) expect(top.stdout).toContain(`  ${entry.name}`);
    const evalHelp = await runKernelseek(['help', 'eval'], {});
    expect(evalHelp.code).toBe(0);
    expect(evalHelp.stdout).toContain('--call-timeout <duration>');
    const unknown = await runKernelseek(['evl'], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command 'evl'[\s\S]*Did you mean eval\?/);
  });

  it('runs the compiled CLI from bin/ (built by npm ci through prepare, or npm run build)', async () => {
    const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
    const bin = path.join(REPO_ROOT, pkg.bin.kernelseek!);
    const version = await execa(process.execPath, [bin, '--version'], { reject: false });
    // An empty stderr: no "no build in dist/" note, so the compiled JavaScript ran.
    expect({ code: version.exitCode, stdout: version.stdout, stderr: version.stderr }).toEqual({ code: 0, stdout: pkg.version, stderr: '' });
    const bad = await execa(process.execPath, [bin, 'eval'], { reject: false });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("missing required argument 'task'");
  });
});
