import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import type { RunCommandContext } from '../../src/cli/commands/run.js';
import { REPO_ROOT, type Env } from '../../src/config/index.js';
import { createTempDir } from '../support/db.js';
import { endTurn, reply, toolUse, userTexts } from '../support/anthropic/script.js';
import { startFakeAnthropic, type FakeAnthropic } from '../support/anthropic/server.js';
import { FAST } from './fixtures/kernels.js';

// `kernelseek run` and `kernelseek trace` in-process, on the embedded database (a fresh data dir:
// what a fresh clone has), the in-process dispatcher and the real harness, against a server that
// speaks the Messages API.
let tmp: { dir: string; remove(): Promise<void> };
let server: FakeAnthropic;

beforeAll(async () => {
  tmp = await createTempDir('ks-cli-run-');
});
afterAll(async () => {
  await server?.close();
  await tmp.remove();
});

async function kernelseek(args: string[], env: Env, options: { stdin?: PassThrough; signal?: AbortSignal; onOutput?: (text: string) => void; interactive?: boolean } = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => {
    out += String(d);
    options.onOutput?.(out);
  });
  stderr.on('data', (d) => (err += String(d)));
  const ctx: RunCommandContext = {
    env,
    cwd: tmp.dir,
    stdout,
    stderr,
    interactive: options.interactive ?? false,
    signal: options.signal ?? new AbortController().signal,
    exitCode: 0,
    stdin: options.stdin ?? new PassThrough(),
  };
  const code = await runCli(args, ctx);
  return { code, stdout: out, stderr: err };
}

function env(dataDir: string): Env {
  return {
    KERNELSEEK_DATA_DIR: dataDir,
    KERNELSEEK_TASKS_DIR: path.join(REPO_ROOT, 'kernels'),
    KERNELSEEK_PYTHON: '/usr/bin/python3',
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: 'sk-ant-cli-test-secret-42',
    KERNELSEEK_MODEL: 'claude-sonnet-4-6',
    PATH: process.env.PATH,
    USER: 'tester',
    LOG_LEVEL: 'silent',
  };
}

describe('kernelseek run', () => {
  it('completes an autonomous run on the cpu task and `kernelseek trace` exports it with secrets redacted', { timeout: 300_000 }, async () => {
    server = await startFakeAnthropic({
      script: [
        reply(toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: FAST }), toolUse('evaluate', {})),
        (req) => {
          expect(userTexts(req).some((t) => t.startsWith('Question (from the question bank)'))).toBe(true);
          return reply(toolUse('bash', { command: 'echo $ANTHROPIC_API_KEY; echo key=sk-ant-cli-test-secret-42' }));
        },
        endTurn('done'),
      ],
    });
    const dataDir = path.join(tmp.dir, 'fresh');
    const result = await kernelseek(['run', 'cpu_softmax', '--autonomous', '--scenarios', 'quick', '--target', '0.2', '--budget-steps', '3'], env(dataDir));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const runId = /Run (ks-[a-z0-9]+) on cpu_softmax/.exec(result.stdout)![1]!;
    expect(result.stdout).toMatch(/eval #1: ok, 3\/3 correct/);
    // Not a terminal: plain lines only, no line rewritten in place while the evaluation runs.
    expect(result.stdout).not.toContain('\r');
    expect(result.stdout).toMatch(/decision point \(target_reached\)/);
    expect(result.stdout).toMatch(/question from the bank \(/);
    expect(result.stdout).toMatch(new RegExp(`Run ${runId} finished: the model-step budget is used up`));
    const bestFile = /written to (\S+)/.exec(result.stdout)![1]!;
    expect(await readFile(bestFile, 'utf8')).toBe(FAST);
    // The summary names where the history really is (a git directory apart from the work tree) and how to export.
    const gitDir = path.join(dataDir, 'git', runId);
    expect(result.stdout).toContain(`history: git --git-dir=${gitDir} log --oneline eval-1`);
    expect(result.stdout).toContain(`Export it with its diff against the baseline and its evidence: kernelseek export ${runId}`);
    const tagged = await execa('git', ['--git-dir', gitDir, 'show', 'eval-1:kernel.cpp'], { env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }, extendEnv: false, stripFinalNewline: false });
    expect(tagged.stdout).toBe(FAST);
    // Chosen on the quick subset: exported, labelled not verified, with the full-set check of the run's end.
    const exported = await kernelseek(['export', runId, '--format', 'json'], env(dataDir));
    expect(exported.code).toBe(0);
    expect(exported.stderr).toContain('NOT VERIFIED (quick subset)');
    expect(JSON.parse(exported.stdout)).toMatchObject({ verified: false, standing: 'subset', scenario_set: { evaluated: 3, total: 11 }, run: { full_set_check: { correct: true, scenarios: 11 } } });

    const traceFile = path.join(tmp.dir, 'trace.jsonl');
    const trace = await kernelseek(['trace', runId, '--out', traceFile], env(dataDir));
    expect(trace.code).toBe(0);
    expect(trace.stderr).toMatch(/Wrote \d+ lines to/);
    const text = await readFile(traceFile, 'utf8');
    const lines = text.trim().split('\n').map((l) => JSON.parse(l) as { type: string });
    expect(lines[0]).toMatchObject({ type: 'run', id: runId, status: 'finished' });
    const types = new Set(lines.map((l) => l.type));
    expect([...types].sort()).toEqual(['evaluation', 'message', 'question', 'run', 'step', 'tool_call']);
    expect(text).not.toContain('sk-ant-cli-test-secret-42');
    expect(text).toContain('[REDACTED]');

    const unknown = await kernelseek(['trace', 'ks-nosuchrun'], env(dataDir));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/There is no run 'ks-nosuchrun'/);
  });

  it('asks on standard input at a decision point, and Ctrl-C stops cleanly and says where the best kernel is', { timeout: 300_000 }, async () => {
    await server?.close();
    server = await startFakeAnthropic({
      script: [
        reply(toolUse('str_replace_based_edit_tool', { command: 'create', path: 'kernel.cpp', file_text: FAST }), toolUse('evaluate', {})),
        (req) => {
          expect(userTexts(req)).toContain('Question from tester: Which scenario is slowest, and why?');
          return endTurn('Thinking.');
        },
      ],
    });
    const stdin = new PassThrough();
    const controller = new AbortController();
    let asked = false;
    let interrupted = false;
    const result = await kernelseek(['run', 'cpu_softmax', '--scenarios', 'quick', '--target', '0.2', '--question-timeout', '10m'], env(path.join(tmp.dir, 'second')), {
      stdin,
      signal: controller.signal,
      interactive: true,
      onOutput: (out) => {
        if (!asked && /Type a question and press Enter/.test(out)) {
          asked = true;
          stdin.write('Which scenario is slowest, and why?\n');
        }
        if (asked && !interrupted && (out.match(/decision point/g) ?? []).length === 2) {
          interrupted = true;
          controller.abort();
        }
      },
    });
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(130);
    expect(result.stdout).toMatch(/question from tester: Which scenario is slowest, and why\?/);
    expect(result.stdout).toMatch(/Interrupted: stopping the run/);
    expect(result.stdout).toMatch(/Run ks-[a-z0-9]+ stopped: interrupted in the terminal \(Ctrl-C\)/);
    expect(result.stdout).toMatch(/Continue it: kernelseek run --resume ks-[a-z0-9]+/);
    // A quick run's best was chosen on the subset: said so, and not called counted.
    expect(result.stdout).toMatch(/Best kernel on the quick subset: evaluation #1, [0-9.]+x vs baseline.*\(quick, 3 of 11 scenarios: not counted\)/);
    // On a terminal the evaluation showed its progress on one line, erased before its headline.
    const draws = result.stdout.split('\r\x1b[2K').slice(1);
    expect(draws.some((d) => /^\[\d\d:\d\d\] . evaluation #1: \d+:\d\d elapsed, timing \d\/3.*, 3\/3 scenarios done — /.test(d))).toBe(true);
    // Between events too: the model's thinking ticks on the live line.
    expect(draws.some((d) => /^\[\d\d:\d\d\] . thinking \(model step \d+\)… \d+ s/.test(d))).toBe(true);
    expect(draws.some((d) => /^\[\d\d:\d\d\] eval #1: ok, 3\/3 correct/.test(d))).toBe(true);
  });

  it('rejects bad options with a message that says how to fix them', async () => {
    const bad = await kernelseek(['run', 'cpu_softmax', '--budget-evals', '-2'], env(path.join(tmp.dir, 'bad')));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--budget-evals -2: give a whole number greater than 0/);
    const unknown = await kernelseek(['run', 'no_such_task'], env(path.join(tmp.dir, 'bad')));
    expect(unknown.stderr).toMatch(/Unknown task 'no_such_task'/);
    const timeout = await kernelseek(['run', 'cpu_softmax', '--question-timeout', 'soon'], env(path.join(tmp.dir, 'bad')));
    expect(timeout.stderr).toMatch(/--question-timeout soon: give a duration/);
  });
});
