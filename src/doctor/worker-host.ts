import { execa } from 'execa';
import { PYTHON_CANDIDATES } from '../harness/runner-python.js';
import { detectGpus, type GpuInfo } from '../queue/gpus.js';
import { compareVersions } from './services.js';
import { probeEnv, versionOf } from './host.js';
import type { CheckContext, CheckLine } from './types.js';

/**
 * A GPU host's own checks: the GPUs and their driver, the CUDA toolkit, Python and the harness's
 * packages. On a host without a GPU they say so honestly: a `fail` when the worker was asked for a
 * CUDA architecture (`--arch sm_90`: it would take no CUDA job), a `warn` otherwise (it serves the
 * cpu queues, which is what a CPU host is for).
 */

// Imports PyYAML and NumPy and reads torch's version; with `cuda`, imports torch and asks it about
// the GPUs (seconds: only where a GPU is expected).
const PROBE = String.raw`
import importlib.util, json, os, re, sys
want_cuda = sys.argv[1] == "cuda"
out = {"python": sys.version.split()[0], "executable": sys.executable}
for name in ("yaml", "numpy"):
    try:
        out[name] = getattr(__import__(name), "__version__", "?")
    except Exception as e:
        out[name] = None
        out[name + "_error"] = type(e).__name__ + ": " + str(e)
spec = importlib.util.find_spec("torch")
out["torch"] = None
if spec is not None and spec.origin:
    if want_cuda:
        try:
            import torch
            out["torch"] = torch.__version__
            out["torch_cuda"] = torch.version.cuda
            out["cuda_available"] = bool(torch.cuda.is_available())
            out["devices"] = torch.cuda.device_count() if out["cuda_available"] else 0
        except Exception as e:
            out["torch_error"] = type(e).__name__ + ": " + str(e)
    else:
        try:
            m = re.search(r"__version__\s*=\s*.([^'\x22]+)", open(os.path.join(os.path.dirname(spec.origin), "version.py")).read())
            out["torch"] = m.group(1) if m else "unknown"
        except OSError:
            out["torch"] = "unknown"
sys.stdout.write(json.dumps(out))
`;

interface PythonFacts {
  python: string;
  executable: string;
  yaml: string | null;
  numpy: string | null;
  torch: string | null;
  torch_cuda?: string | null;
  cuda_available?: boolean;
  devices?: number;
  torch_error?: string;
  yaml_error?: string;
  numpy_error?: string;
}

async function probePython(python: string, cuda: boolean, env: Record<string, string>): Promise<{ facts?: PythonFacts; why?: string }> {
  const r = await execa(python, ['-c', PROBE, cuda ? 'cuda' : 'cpu'], { env, extendEnv: false, reject: false, timeout: 120_000, stdin: 'ignore' });
  if ((r as { code?: string }).code === 'ENOENT') return { why: 'not found' };
  if (r.exitCode !== 0) return { why: String(r.stderr).trim().split('\n').pop() || `exit status ${r.exitCode}` };
  try {
    return { facts: JSON.parse(String(r.stdout)) as PythonFacts };
  } catch {
    return { why: `unexpected output: ${String(r.stdout).slice(0, 200)}` };
  }
}

/** The CUDA version the driver supports, from nvidia-smi's banner ("CUDA Version: 13.0"). */
async function driverCuda(nvidiaSmi: string, env: Record<string, string>): Promise<string | null> {
  const r = await execa(nvidiaSmi, [], { env, extendEnv: false, reject: false, timeout: 30_000, stdin: 'ignore' });
  return /CUDA Version:\s*(\d+\.\d+)/.exec(String(r.stdout))?.[1] ?? null;
}

export async function checkWorkerHost(ctx: CheckContext): Promise<CheckLine[]> {
  if (!ctx.config) return [];
  const env = probeEnv(ctx);
  const nvidiaSmi = ctx.nvidiaSmi ?? 'nvidia-smi';
  const lines: CheckLine[] = [];
  const detection = await detectGpus(env, nvidiaSmi);
  const askedCuda = ctx.arch !== undefined && ctx.arch !== 'cpu';
  let gpus: GpuInfo[] = [];
  if (ctx.arch === 'cpu') {
    lines.push({ status: 'ok', name: 'GPU', detail: 'not used (--arch cpu): this worker serves the cpu queues' });
  } else if (detection.kind === 'none') {
    lines.push(
      askedCuda
        ? { status: 'fail', name: 'GPU', detail: `none found (${detection.reason}), but --arch ${ctx.arch} asks for CUDA jobs: this worker would take none`, fix: 'run it on a GPU host with the NVIDIA driver installed (nvidia-smi lists the GPUs), or drop --arch to serve the cpu queues' }
        : { status: 'warn', name: 'GPU', detail: `none found (${detection.reason}): this worker serves the cpu queues only (tasks with device cpu); CUDA tasks wait for a GPU host`, fix: 'on a GPU host, install the NVIDIA driver so that nvidia-smi lists the GPUs (docs/deploy.md, "A GPU host")' },
    );
  } else {
    gpus = ctx.gpus?.length ? detection.gpus.filter((g) => ctx.gpus!.includes(g.index)) : detection.gpus;
    const missing = (ctx.gpus ?? []).filter((i) => !detection.gpus.some((g) => g.index === i));
    if (missing.length) lines.push({ status: 'fail', name: 'GPU', detail: `--gpus names ${missing.join(', ')}, which this host does not have (it has ${detection.gpus.map((g) => g.index).join(', ')})`, fix: 'give indices as nvidia-smi numbers them' });
    for (const g of gpus) lines.push({ status: 'ok', name: 'GPU', detail: `${g.index}: ${g.name}, ${g.arch ?? 'compute capability not reported'}${g.memoryMiB ? `, ${g.memoryMiB} MiB` : ''}` });
    const archs = [...new Set(gpus.map((g) => g.arch))];
    if (!ctx.arch && archs.length > 1) lines.push({ status: 'fail', name: 'GPU', detail: `GPUs of different architectures (${archs.join(', ')})`, fix: 'start one worker per architecture, with --gpus and --arch' });
    if (!ctx.arch && archs.includes(null)) lines.push({ status: 'fail', name: 'GPU', detail: 'this nvidia-smi does not report compute capability', fix: 'pass --arch (e.g. --arch sm_90)' });
  }
  const cuda = gpus.length > 0 && ctx.arch !== 'cpu';
  const arch = ctx.arch ?? gpus[0]?.arch ?? 'cpu';
  let supported: string | null = null;
  if (cuda) {
    supported = await driverCuda(nvidiaSmi, env);
    lines.push({ status: 'ok', name: 'driver', detail: `${gpus[0]!.driver}${supported ? `: runs CUDA ${supported} and older` : ''}` });
  }
  // The CUDA toolkit: nvcc compiles every CUDA candidate.
  const nvcc = ctx.config.harness.nvcc;
  const v = await versionOf(nvcc, ['--version'], env);
  if (!v.ok) {
    if (cuda || askedCuda) lines.push({ status: 'fail', name: 'nvcc', detail: `${v.why}: CUDA candidates cannot be compiled`, fix: 'install the CUDA toolkit (its bin/ on PATH) or set KERNELSEEK_NVCC to its nvcc' });
  } else {
    const release = /release (\d+\.\d+)/.exec(v.text)?.[1] ?? 'unknown';
    if (cuda && supported && release !== 'unknown' && compareVersions(release, supported) > 0) {
      lines.push({ status: 'fail', name: 'nvcc', detail: `CUDA toolkit ${release} is newer than the driver runs (${supported}): kernels it builds will not load`, fix: `install a CUDA toolkit ${supported} or older, or upgrade the driver` });
    } else {
      lines.push({ status: 'ok', name: 'nvcc', detail: `${nvcc}: CUDA toolkit ${release}${cuda ? '' : ' (not needed for the cpu queues)'}` });
    }
    if (cuda && arch.startsWith('sm_')) {
      const list = await versionOf(nvcc, ['--list-gpu-arch'], env);
      const code = `compute_${arch.slice(3).replace(/a$/, '')}`;
      if (list.ok && !list.text.split('\n').some((l) => l.trim() === code)) {
        lines.push({ status: 'fail', name: 'nvcc', detail: `CUDA toolkit ${release} cannot build for ${arch} (${code} is not in nvcc --list-gpu-arch)`, fix: `install a CUDA toolkit that knows ${arch}` });
      }
    }
  }
  lines.push(...(await checkPython(ctx, cuda, env)));
  return lines;
}

async function checkPython(ctx: CheckContext, cuda: boolean, env: Record<string, string>): Promise<CheckLine[]> {
  const configured = ctx.config!.harness.python;
  const tried: string[] = [];
  let facts: PythonFacts | undefined;
  let chosen = '';
  for (const python of configured ? [configured] : PYTHON_CANDIDATES) {
    const r = await probePython(python, cuda, env);
    if (r.facts && r.facts.torch && r.facts.yaml) {
      facts = r.facts;
      chosen = python;
      break;
    }
    tried.push(`${python}: ${r.why ?? (r.facts?.torch_error ? `torch: ${r.facts.torch_error}` : `missing ${[!r.facts?.torch && 'torch', !r.facts?.yaml && 'yaml'].filter(Boolean).join(' and ')}`)}`);
  }
  if (!facts) {
    return [{
      status: 'fail',
      name: 'Python',
      detail: `no interpreter with torch and PyYAML (${tried.join('; ')})`,
      fix: configured ? 'KERNELSEEK_PYTHON must name a Python that can import torch, yaml and numpy' : 'install PyTorch, PyYAML and NumPy for python3 (scripts/setup.sh on a CPU host; deploy/gpu-worker/requirements.txt on a GPU host), or set KERNELSEEK_PYTHON',
    }];
  }
  const lines: CheckLine[] = [];
  const cudaNote = cuda ? `, CUDA ${facts.torch_cuda ?? 'none'}, ${facts.devices ?? 0} GPU(s) visible` : '';
  lines.push({ status: 'ok', name: 'Python', detail: `${chosen} ${facts.python} (${facts.executable}): torch ${facts.torch}${cudaNote}, PyYAML ${facts.yaml}, NumPy ${facts.numpy ?? 'missing'}` });
  if (!facts.numpy) lines.push({ status: 'fail', name: 'Python', detail: `NumPy does not import in ${chosen} (${facts.numpy_error ?? 'not installed'})`, fix: 'install NumPy for that interpreter (pip install numpy, or apt-get install python3-numpy)' });
  if (compareVersions(facts.python, '3.10') < 0) lines.push({ status: 'fail', name: 'Python', detail: `Python ${facts.python} is older than the 3.10 the harness needs`, fix: 'use Python 3.10 or later (KERNELSEEK_PYTHON)' });
  if (cuda && !facts.cuda_available) {
    lines.push({
      status: 'fail',
      name: 'Python',
      detail: `torch ${facts.torch} cannot use the GPU (${facts.torch_cuda ? `built for CUDA ${facts.torch_cuda}; torch.cuda.is_available() is false` : 'a CPU-only build'})`,
      fix: "install a CUDA build of PyTorch that the driver runs (deploy/gpu-worker/requirements.txt), e.g. pip install torch --index-url https://download.pytorch.org/whl/cu130",
    });
  }
  return lines;
}
