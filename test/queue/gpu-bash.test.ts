import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { UserInputError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { createBullmqDispatcher, toGpuBashPayload } from '../../src/queue/bullmq-dispatcher.js';
import { packWorkspace } from '../../src/queue/archive.js';
import { redisOptionsFromUrl } from '../../src/queue/connection.js';
import { runGpuBash } from '../../src/queue/gpu-bash.js';
import { loadResultKey } from '../../src/queue/result-key.js';
import { startGpuWorker, type GpuWorkerHandle } from '../../src/queue/worker/gpu-worker.js';
import { createTempDir } from '../support/db.js';
import { newPrefix, REDIS_URL, removePrefix, BASH_CPU } from './support.js';

const ENV = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', ANTHROPIC_API_KEY: 'sk-ant-do-not-leak', REDIS_URL };
// The sandbox is on (the default): every command here runs in bubblewrap.
const CONFIG = loadConfig({ PATH: process.env.PATH });

describe('gpu_bash', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  let archive: Buffer;
  beforeAll(async () => {
    tmp = await createTempDir('ks-gpu-bash-');
    const ws = path.join(tmp.dir, 'ws');
    await mkdir(path.join(ws, 'notes'), { recursive: true });
    await writeFile(path.join(ws, 'kernel.cu'), '__global__ void k() {}\n');
    await writeFile(path.join(ws, 'notes', 'plan.md'), 'try a different tiling\n');
    archive = await packWorkspace(ws);
  });
  afterAll(() => tmp.remove());

  it('runs the command in a copy of the workspace with only PATH, HOME, LANG (and the GPU) in its environment', async () => {
    const r = await runGpuBash({ command: 'cat notes/plan.md; ls; env | sort', archive, timeoutSeconds: 30, gpuIndex: 2 }, ENV, CONFIG);
    expect(r.exitCode).toBe(0);
    expect(r.output).toContain('try a different tiling');
    expect(r.output).toContain('kernel.cu');
    expect(r.output).toContain('CUDA_VISIBLE_DEVICES=2');
    expect(r.output).not.toContain('sk-ant-do-not-leak');
    expect(r.output).not.toContain('REDIS_URL');
    expect(r.output).toContain('HOME=/home/agent');
  });

  it('caps the output, keeping its head and its tail', async () => {
    const r = await runGpuBash(
      { command: 'echo FIRST-LINE; for i in $(seq 1 20000); do echo "noise line $i"; done; echo LAST-LINE >&2; exit 3', archive, timeoutSeconds: 60, gpuIndex: null, outputCapBytes: 4096 },
      ENV,
      CONFIG,
    );
    expect(r.exitCode).toBe(3);
    expect(r.truncated).toBe(true);
    expect(r.output.startsWith('FIRST-LINE')).toBe(true);
    expect(r.output.trimEnd().endsWith('LAST-LINE')).toBe(true);
    expect(r.output).toMatch(/bytes of output omitted/);
    expect(r.output.length).toBeLessThan(4096 + 200);
  });

  it('kills the command and everything it started at the time limit', async () => {
    const marker = `${Math.floor(Math.random() * 1e6) + 1000}`;
    const started = Date.now();
    const r = await runGpuBash({ command: `setsid sleep ${marker} & echo started; sleep 300`, archive, timeoutSeconds: 1.5, gpuIndex: null }, ENV, CONFIG);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.output).toContain('started');
    expect(r.output).toMatch(/killed: the command ran past its 1.5 s limit/);
    // The sandbox's PID namespace hides the pid; the host's process table shows what survived.
    await new Promise((res) => setTimeout(res, 300));
    const { execFileSync } = await import('node:child_process');
    const survivors = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(`sleep ${marker}`));
    expect(survivors).toEqual([]);
  });

  it('refuses a workspace snapshot over the size cap with the size and the cap', async () => {
    const big = path.join(tmp.dir, 'big');
    await mkdir(big);
    await writeFile(path.join(big, 'data.bin'), randomBytes(9 << 20));
    await expect(packWorkspace(big)).rejects.toThrow(/compressed; gpu_bash takes at most 8 MiB/);
    expect(() => toGpuBashPayload({ runId: 'r', seq: 1, command: 'ls', archive: Buffer.alloc(9 << 20), timeoutSeconds: 5 })).toThrow(UserInputError);
  });

  it('a root worker\'s command is not host root: no sysctl, no nested user namespace, /tmp capped', async () => {
    expect(process.getuid?.()).toBe(0);
    const r = await runGpuBash(
      {
        command:
          'v=$(cat /proc/sys/vm/stat_interval); echo "$v" > /proc/sys/vm/stat_interval && echo WROTE-SYSCTL; : >> /proc/sys/kernel/core_pattern && echo OPENED-CORE-PATTERN; ' +
          'unshare -U true && echo NESTED-USERNS; head -c 20000000 /dev/zero > /tmp/fill 2>/dev/null; stat -c %s /tmp/fill; touch made && echo WORKSPACE-WRITABLE',
        archive,
        timeoutSeconds: 30,
        gpuIndex: null,
      },
      ENV,
      loadConfig({ PATH: process.env.PATH, KERNELSEEK_SANDBOX_TMP_MB: '8' }),
    );
    expect(r.output).not.toMatch(/WROTE-|OPENED-|NESTED-/);
    expect(r.output).toContain('WORKSPACE-WRITABLE');
    expect(Number(r.output.match(/^(\d+)$/m)?.[1])).toBeLessThanOrEqual(8 * 2 ** 20);
  });

  it('a snapshot that expands past the cap, or holds a device, fails that call with the reason (nothing thrown)', async () => {
    const bombDir = path.join(tmp.dir, 'bomb');
    await mkdir(bombDir);
    // 300 MB of zeros: a few hundred KB compressed, over the 256 MiB the worker unpacks.
    execFileSync('bash', ['-c', `head -c 300000000 /dev/zero > ${bombDir}/zeros`]);
    const bomb = await packWorkspace(bombDir);
    await rm(bombDir, { recursive: true });
    const big = await runGpuBash({ command: 'echo RAN', archive: bomb, timeoutSeconds: 30, gpuIndex: null }, ENV, CONFIG);
    expect(big).toMatchObject({ exitCode: null, timedOut: false });
    expect(big.output).toMatch(/gpu_bash did not run: The workspace snapshot expands to 286 MiB; at most 256 MiB/);
    expect(big.output).not.toContain('RAN');
    // A character device (what /dev/null is), which root's tar would recreate on the host.
    const devTar = path.join(tmp.dir, 'dev.tgz');
    execFileSync('tar', ['-czf', devTar, '-C', '/dev', 'null']);
    const dev = await runGpuBash({ command: 'echo RAN', archive: await readFile(devTar), timeoutSeconds: 30, gpuIndex: null }, ENV, CONFIG);
    expect(dev.output).toMatch(/gpu_bash did not run: The workspace snapshot holds a member that is not a file, folder, link or FIFO \(c/);
  });

  describe('through Redis and a worker', () => {
    const prefix = newPrefix('bash');
    let worker: GpuWorkerHandle;
    let dispatcher: ReturnType<typeof createBullmqDispatcher>;
    beforeAll(async () => {
      const config = loadConfig({ REDIS_URL, KERNELSEEK_QUEUE_PREFIX: prefix, KERNELSEEK_DATA_DIR: path.join(tmp.dir, 'data') });
      worker = await startGpuWorker({ config, env: ENV, logger: silentLogger, nvidiaSmi: '/nonexistent/nvidia-smi' });
      // No KERNELSEEK_RESULT_KEY: worker and dispatcher share the data dir's key file, as on one host.
      dispatcher = createBullmqDispatcher({ connection: redisOptionsFromUrl(REDIS_URL), prefix, resultKey: await loadResultKey(config) });
    });
    afterAll(async () => {
      await dispatcher?.close();
      await worker?.close(1);
      await removePrefix(prefix);
    });

    it('returns the command output from the worker; a duplicate request returns the same run', async () => {
      const request = { runId: 'ks-bashtest', seq: 1, command: 'cat kernel.cu; date +%s%N', archive, timeoutSeconds: 30 };
      const first = await dispatcher.gpuBash(request);
      expect(first.exitCode).toBe(0);
      expect(first.output).toContain('__global__ void k()');
      expect(first.worker).toMatch(/\/cpu$/);
      const again = await dispatcher.gpuBash(request);
      expect(again.output).toBe(first.output);
    });

    it('answers a snapshot that is not an archive at once, with the reason: that call fails, not the run', async () => {
      const r = await dispatcher.gpuBash({ runId: 'ks-bashtest', seq: 2, command: 'ls', archive: Buffer.from('not a tarball'), timeoutSeconds: 30 });
      expect(r).toMatchObject({ exitCode: null, output: expect.stringMatching(/gpu_bash did not run: .*not a gzipped tar archive/) });
      const job = await dispatcher.client.queue(BASH_CPU).getJob('bash:ks-bashtest:2');
      expect(job?.attemptsMade).toBe(1);
    });
  });
});
