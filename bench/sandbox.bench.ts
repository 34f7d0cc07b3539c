/**
 * The sandbox's overhead: a trivial command (`true`) run the way the bash tool runs it (prlimit +
 * bubblewrap with the run's binds, through runSandboxed) against the same command spawned plainly
 * (`bash -c true`, what KERNELSEEK_SANDBOX=off does). Goal: median overhead ≤ 50 ms.
 *
 *   npx tsx bench/sandbox.bench.ts [iterations=40]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { giveToSandbox, probeSandbox, runSandboxed } from '../src/agent/tools/sandbox-run.js';
import { sandboxEnvironment, sandboxOwner, type SandboxSpec } from '../src/agent/tools/sandbox.js';

const iterations = Number(process.argv[2] ?? 40);
const probe = probeSandbox();
if (!probe.ok) throw new Error(`the sandbox is unavailable here: ${probe.why}`);

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const root = await mkdtemp(path.join(os.tmpdir(), 'ks-bench-sandbox-'));
try {
  const env = sandboxEnvironment({ PATH: '/usr/local/bin:/usr/bin:/bin' }, { python: '/usr/bin/python3', nvcc: 'nvcc' });
  const spec: SandboxSpec = { workspace: root, env, gpu: false, readOnly: [], limits: { memoryBytes: 8 * 2 ** 30, processes: 256, fileBytes: 2 ** 30, tmpBytes: 2 ** 30 } };
  spec.owner = sandboxOwner('bench');
  await giveToSandbox(spec.owner, [root]);
  const time = async (sandboxed: boolean) => {
    const t = performance.now();
    const r = await runSandboxed('true', { spec: sandboxed ? spec : null, plain: { cwd: root, env }, timeoutMs: 30_000, outputCap: 1000 });
    if (r.exitCode !== 0) throw new Error(`the command failed: ${r.output}`);
    return performance.now() - t;
  };
  // Warm-up (page cache, first exec of bwrap), then alternate so both see the same machine load.
  for (let i = 0; i < 3; i++) {
    await time(true);
    await time(false);
  }
  const plain: number[] = [];
  const boxed: number[] = [];
  for (let i = 0; i < iterations; i++) {
    plain.push(await time(false));
    boxed.push(await time(true));
  }
  const overhead = boxed.map((b, i) => b - plain[i]!);
  const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
  console.log(`${iterations} runs of \`true\`, plain spawn vs sandbox (prlimit + bwrap, user/pid/net/ipc/uts namespaces):`);
  console.log(`  plain:    median ${fmt(pct(plain, 50))}, p90 ${fmt(pct(plain, 90))}`);
  console.log(`  sandbox:  median ${fmt(pct(boxed, 50))}, p90 ${fmt(pct(boxed, 90))}`);
  console.log(`  overhead: median ${fmt(pct(overhead, 50))}, p90 ${fmt(pct(overhead, 90))} (goal: median ≤ 50 ms) — ${pct(overhead, 50) <= 50 ? 'met' : 'NOT met'}`);
} finally {
  await rm(root, { recursive: true, force: true });
}
