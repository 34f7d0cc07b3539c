import { mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportError } from '../../src/cli/error-output.js';
import { runKernelseek, type CliResult } from '../support/cli.js';
import { createTempDir, TEST_POSTGRES_URL } from '../support/db.js';

/** What a person must see for bad input: a non-zero status, no stack trace, and the line that explains it. */
function expectRefused(result: CliResult, code: number, line: RegExp): void {
  expect(result.stderr, result.stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  expect(result.stderr).toMatch(line);
  expect(result.code, result.stderr).toBe(code);
}

let work: { dir: string; remove(): Promise<void> };
/** An environment whose state lives in this test's folder (never the checkout's .kernelseek). */
let env: Record<string, string>;
beforeAll(async () => {
  work = await createTempDir('ks-bad-input-');
  env = { KERNELSEEK_DATA_DIR: path.join(work.dir, 'state') };
});
afterAll(async () => work.remove());

describe('kernelseek with bad input', () => {
  it("shows the compiler's own error for a kernel that does not compile, at the file the person gave", async () => {
    const kernel = path.join(work.dir, 'broken.cpp');
    await writeFile(kernel, 'extern "C" void softmax_rows(const float* x, float* y, long rows, long cols) {\n  int n = ;\n}\n');
    const result = await runKernelseek(['eval', 'cpu_softmax', 'broken.cpp', '--scenarios', 'quick'], env, { cwd: work.dir });
    expectRefused(result, 1, /^error: broken\.cpp does not compile: broken\.cpp:2:\d+: error: expected primary-expression.* — fix it and run kernelseek eval again\.$/m);
    expect(result.stdout).toMatch(/^compiler output:\n( {2}.*\n)* {2}broken\.cpp:2:\d+: error: /m);
    expect(result.stdout).not.toContain('see compile.log');
  });

  it('refuses a DIGEST_CRON that BullMQ would reject, before anything starts', async () => {
    // 61 25: out of range; 31 2: a day February never has (passes a per-field pattern check).
    for (const cron of ['61 25 * * *', '0 9 31 2 *', '0 9 * *']) {
      for (const command of [['digest', '--print'], ['serve', '--role', 'scheduler']]) {
        const result = await runKernelseek(command, { ...env, DIGEST_CRON: cron, REDIS_URL: 'redis://127.0.0.1:1' });
        expectRefused(result, 78, new RegExp(`^  - DIGEST_CRON: must be a cron expression BullMQ accepts: .*e\\.g\\. "0 9 \\* \\* \\*".* \\(got "${cron.replace(/\*/g, '\\*')}"\\)$`, 'm'));
      }
    }
  });

  it('names KERNELSEEK_DATA_DIR when it cannot hold files: a file, under a file, on /proc or /sys', async () => {
    const file = path.join(work.dir, 'a-file');
    await writeFile(file, 'not a folder\n');
    const cases: [string, RegExp][] = [
      [file, /is a file, not a folder/],
      [path.join(file, 'state'), /is under .*a-file, which is a file, not a folder/],
      ['/proc/kernelseek', /on procfs, a kernel pseudo-filesystem/],
      ['/sys/kernelseek', /on sysfs, a kernel pseudo-filesystem/],
    ];
    for (const [dir, reason] of cases) {
      const started = Date.now();
      const result = await runKernelseek(['digest', '--print'], { KERNELSEEK_DATA_DIR: dir });
      expectRefused(result, 78, new RegExp(`^  - KERNELSEEK_DATA_DIR: .*${reason.source}.*: point it at a folder`, 'm'));
      // Refused up front: the embedded database under /proc used to spin for minutes.
      expect(Date.now() - started).toBeLessThan(10_000);
    }
  });

  it('says which database URL failed and why: nothing listening, no such database', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise((r) => server.close(r)); // a port that was just free: nothing listens there
    const closed = await runKernelseek(['migrate'], { ...env, DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/test` });
    expectRefused(closed, 1, new RegExp(`^error: Cannot connect to PostgreSQL at postgres://postgres@127\\.0\\.0\\.1:${port}/test \\(DATABASE_URL\\): nothing is listening at 127\\.0\\.0\\.1:${port} \\(connection refused\\): start PostgreSQL`, 'm'));
    const url = new URL(TEST_POSTGRES_URL);
    url.pathname = '/kernelseek_no_such_db';
    const missing = await runKernelseek(['migrate'], { ...env, DATABASE_URL: url.toString() });
    expectRefused(missing, 1, /DATABASE_URL\): database "kernelseek_no_such_db" does not exist: create it \(createdb -h \S+ kernelseek_no_such_db\)/);
  });

  it('names the task, file, flag or duration at fault, as a new user would meet them', async () => {
    await mkdir(path.join(work.dir, 'folder.cpp'), { recursive: true });
    await writeFile(path.join(work.dir, 'ok.cpp'), 'int x;\n');
    const cases: [string[], number, RegExp][] = [
      [['eval', 'no_such_task', 'ok.cpp'], 1, /^error: Unknown task 'no_such_task'\. Available tasks: .*cpu_softmax/m],
      [['eval', 'cpu_softmax', 'missing.cpp'], 1, /^error: Kernel file not found: .*missing\.cpp/m],
      [['eval', 'cpu_softmax', 'folder.cpp'], 1, /folder\.cpp is not a file: give the one kernel source file/],
      [['eval', 'cpu_softmax', 'ok.cu'], 1, /cpu_softmax is a cpu task: the kernel must be a \.cpp or \.cc or \.cxx file/],
      [['eval', 'cpu_softmax', 'ok.cpp', '--timeout', 'soon'], 1, /^error: --timeout soon: give a duration such as 90s, 10m or 1h\.$/m],
      [['eval', 'cpu_softmax', 'ok.cpp', '--seeds', 'many'], 1, /^error: --seeds many: give a whole number of at least 2\.$/m],
      [['eval', 'cpu_softmax'], 2, /missing required argument 'kernel'/],
      [['eval', 'cpu_softmax', 'ok.cpp', '--bogus'], 2, /unknown option '--bogus'/],
      [['digest', '--since', 'yesterday'], 1, /--since/],
      [['digest', '--tz', 'Mars/Olympus'], 1, /^error: --tz must be an IANA time zone/m],
      [['gpu-worker', '--grace', 'forever'], 1, /^error: --grace forever: give a duration such as 60s or 5m\.$/m],
      [['run', 'cpu_softmax', '--budget-time', 'a while'], 1, /^error: --budget-time a while: give a duration such as 90s, 10m or 2h\.$/m],
      [['run', 'cpu_softmax', '--budget-evals', '2.5'], 1, /^error: --budget-evals 2\.5: give a whole number greater than 0\.$/m],
      [['serve', '--role', 'everything'], 1, /^error: Unknown role 'everything'\. Use one of: all, slack, agent, scheduler/m],
      [['bank', 'promote', 'abc', '--kind', 'x', '--triggers', 'y'], 1, /^error: The question id must be a number/m],
      [['evaluate'], 2, /unknown command 'evaluate'/],
    ];
    const noTasks = { ...env, KERNELSEEK_TASKS_DIR: path.join(work.dir, 'no-such-kernels') };
    expectRefused(await runKernelseek(['tasks'], noTasks), 1, /no-such-kernels: cannot read the tasks folder \(it does not exist\): point KERNELSEEK_TASKS_DIR at the folder/);
    expectRefused(await runKernelseek(['eval', 'cpu_softmax', 'ok.cpp'], noTasks, { cwd: work.dir }), 1, /^error: Task 'cpu_softmax' cannot be looked up: .*no-such-kernels: cannot read the tasks folder \(it does not exist\): point KERNELSEEK_TASKS_DIR/m);
    for (const [args, code, line] of cases) {
      const result = await runKernelseek(args, env, { cwd: work.dir });
      expect({ args, code: result.code }).toEqual({ args, code });
      expectRefused(result, code, line);
    }
  });

  it('prints an unexpected failure in one line, with the stack only at LOG_LEVEL=debug', () => {
    const capture = (error: unknown, logLevel?: string) => {
      const err = new PassThrough();
      let text = '';
      err.on('data', (d) => (text += String(d)));
      const code = reportError(error, logLevel ? { LOG_LEVEL: logLevel } : {}, err);
      return { code, text };
    };
    const plain = capture(new TypeError("Cannot read properties of undefined (reading 'x')"));
    expect(plain.code).toBe(1);
    expect(plain.text).toBe("error: Cannot read properties of undefined (reading 'x')\nThis was not expected: run again with LOG_LEVEL=debug to see where it happened, and report it.\n");
    expect(capture(new TypeError('boom'), 'debug').text).toMatch(/^error: boom\nTypeError: boom\n\s+at /);
    // The operating system's own failures name the path they are about.
    const enotdir = Object.assign(new Error("ENOTDIR: not a directory, open '/tmp/f/x.yaml'"), { code: 'ENOTDIR', syscall: 'open', path: '/tmp/f/x.yaml' });
    expect(capture(enotdir).text).toBe('error: cannot open /tmp/f/x.yaml: a part of the path is a file, not a folder (ENOTDIR). Check the path, or the variable or option that gave it.\n');
  });
});
