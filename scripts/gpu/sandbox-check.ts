/**
 * Runs commands through the real gpu_bash code path of a worker host (runGpuBash: bubblewrap with the
 * GPU device nodes bound, CUDA_VISIBLE_DEVICES of the slot) and prints what they saw. Used by
 * scripts/gpu/sandbox-check.sh on a GPU host; `node --import tsx scripts/gpu/sandbox-check.ts <dir> <gpu>`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { probeSandbox } from '../../src/agent/tools/sandbox-run.js';
import { loadConfig, readProcessEnv } from '../../src/config/index.js';
import { packWorkspace } from '../../src/queue/archive.js';
import { runGpuBash } from '../../src/queue/gpu-bash.js';

const [outDir = '/tmp/ks-sandbox-check', gpu = '0'] = process.argv.slice(2);
const env = readProcessEnv();
const config = loadConfig(env);
const probe = probeSandbox(env.PATH);
console.log(`probe: ${JSON.stringify(probe)}`);
const ws = path.join(outDir, 'ws');
await mkdir(ws, { recursive: true });
await writeFile(
  path.join(ws, 'hello.cu'),
  '#include <cstdio>\n__global__ void add(int* x) { x[threadIdx.x] += threadIdx.x; }\nint main() {\n  int* d; int h[32] = {0};\n  if (cudaMalloc(&d, sizeof h) != cudaSuccess) { std::puts("cudaMalloc failed"); return 1; }\n  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice); add<<<1, 32>>>(d); cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);\n  int s = 0; for (int v : h) s += v; std::printf("cuda sum=%d (expect 496): %s\\n", s, cudaGetErrorString(cudaGetLastError()));\n  return s == 496 ? 0 : 2;\n}\n',
);
const archive = await packWorkspace(ws);
const checks: [string, string][] = [
  ['nvidia-smi', 'nvidia-smi; echo "rc=$?"'],
  ['nvcc', 'nvcc --version | tail -2; nvcc -O2 -o hello hello.cu && ./hello; echo "rc=$?"'],
  ['reach', 'id; ls /; ls /dev | grep -c nvidia; tail -n +3 /proc/net/dev | cut -d: -f1; env | sort; for p in 6379 5432; do (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && echo "REACHED $p"; done; ls /root /run 2>&1; echo done'],
  // Issue 39: run as root, the command must not be host root (no sysctl write, no nested user
  // namespace) yet still drive the GPU as the run's own unprivileged uid; /tmp and /dev/shm capped.
  ['unprivileged', 'v=$(cat /proc/sys/vm/stat_interval); echo "$v" > /proc/sys/vm/stat_interval && echo WROTE-SYSCTL; : >> /proc/sys/kernel/core_pattern && echo OPENED-CORE-PATTERN; unshare -U true && echo NESTED-USERNS; ls /proc/self/fd | tr "\\n" " "; echo; df -h /tmp /dev/shm | tail -2; ./hello 2>/dev/null || (nvcc -O2 -o hello hello.cu && ./hello); echo done'],
  ['survivor', 'setsid sleep 4242 & echo started'],
];
for (const [name, command] of checks) {
  const r = await runGpuBash({ command, archive, timeoutSeconds: 120, gpuIndex: Number(gpu) }, env, config);
  const text = `== ${name}: exit ${r.exitCode}, ${r.durationMs} ms${r.timedOut ? ', TIMED OUT' : ''}\n${r.output}\n`;
  console.log(text);
  await writeFile(path.join(outDir, `${name}.txt`), text);
}
