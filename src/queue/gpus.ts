import { execa } from 'execa';

/** One GPU as nvidia-smi reports it. */
export interface GpuInfo {
  /** nvidia-smi's index (PCI bus order): the value CUDA_VISIBLE_DEVICES takes with CUDA_DEVICE_ORDER=PCI_BUS_ID. */
  index: number;
  name: string;
  driver: string;
  memoryMiB: number | null;
  /** `sm_90` from compute capability 9.0; null when this nvidia-smi cannot report it. */
  arch: string | null;
}

export type GpuDetection =
  | { kind: 'gpus'; gpus: GpuInfo[] }
  | { kind: 'none'; reason: string };

const QUERY = 'index,name,driver_version,memory.total,compute_cap';
const QUERY_OLD = 'index,name,driver_version,memory.total';

/** Parses `nvidia-smi --query-gpu=<QUERY> --format=csv,noheader,nounits` output. */
export function parseNvidiaSmi(text: string): GpuInfo[] {
  const gpus: GpuInfo[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const f = line.split(',').map((s) => s.trim());
    const index = Number(f[0]);
    if (!Number.isInteger(index) || f.length < 4) throw new Error(`unexpected nvidia-smi line: ${line}`);
    const mem = Number(f[3]);
    const cap = f[4] && /^\d+\.\d+$/.test(f[4]) ? f[4] : null;
    gpus.push({
      index,
      name: f[1] ?? 'unknown GPU',
      driver: f[2] ?? 'unknown',
      memoryMiB: Number.isFinite(mem) ? mem : null,
      arch: cap ? `sm_${cap.replace('.', '')}` : null,
    });
  }
  return gpus;
}

/** Asks nvidia-smi which GPUs this host has; no nvidia-smi or no GPU means a CPU-only host. */
export async function detectGpus(env: Record<string, string>, nvidiaSmi = 'nvidia-smi'): Promise<GpuDetection> {
  for (const query of [QUERY, QUERY_OLD]) {
    const r = await execa(nvidiaSmi, [`--query-gpu=${query}`, '--format=csv,noheader,nounits'], {
      env,
      extendEnv: false,
      reject: false,
      timeout: 30_000,
      stdin: 'ignore',
    });
    if ((r as { code?: string }).code === 'ENOENT') return { kind: 'none', reason: `${nvidiaSmi} not found` };
    if (r.exitCode === 0) {
      const gpus = parseNvidiaSmi(String(r.stdout));
      return gpus.length > 0 ? { kind: 'gpus', gpus } : { kind: 'none', reason: 'nvidia-smi lists no GPU' };
    }
    // Older drivers do not know compute_cap: ask again without it (the arch then comes from --arch).
    if (query === QUERY && /compute_cap/.test(`${r.stdout}${r.stderr}`)) continue;
    return { kind: 'none', reason: `nvidia-smi failed: ${String(r.stderr || r.stdout).trim().split('\n')[0]}` };
  }
  return { kind: 'none', reason: 'nvidia-smi gave no answer' };
}
