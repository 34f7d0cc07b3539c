#!/usr/bin/env bash
# Issue 40's TypeScript side on one H100/H200 (device tool), from the repository root, after
# way-in-ts and way-in-harness are both merged, with .carry/host (`bash scripts/pack-gpu-host.sh`:
# Node, node_modules, bubblewrap) and .carry/cutlass (as scripts/gpu/way-in-check.sh says) carried:
#   OUT=/tmp/out KS_COMMIT=<sha> bash scripts/gpu/way-in-ts-check.sh        (about 6-9 minutes)
# 1. `kernelseek task init` from a CUDA kernel (kernels/rmsnorm's baseline, --op rmsnorm): the task
#    written, checked (the harness's check-task --json runs reference.py on the GPU) and its
#    baseline evaluated on the quick scenarios here, the peers found printed;
# 2. `kernelseek eval gemm_cute kernels/gemm_cute/baseline/` (a folder candidate through the TS
#    runner: files written, --candidate a folder) on the quick scenarios, then --compile-only;
# 3. `kernelseek eval softmax_triton kernels/softmax_triton/baseline.py` on the quick scenarios;
# 4. `kernelseek tasks --check` over kernels/ (every shipped task, the harness's check included).
# Each step's output in $OUT/<step>.log, exit codes and walls in $OUT/walls.txt, a summary on stdout.
set -u
: "${OUT:?set OUT}"
mkdir -p "$OUT"
# shellcheck disable=SC1091
source scripts/gpu-host-env.sh
. "$(dirname "$0")/lib.sh"
export PATH="/usr/local/cuda/bin:$PATH"
export KERNELSEEK_CUTLASS_DIR=${KERNELSEEK_CUTLASS_DIR:-$PWD/.carry/cutlass}
KS="node --import tsx src/cli/main.ts"
T=/tmp/ks-way-in-ts; rm -rf "$T"; mkdir -p "$T"
step init 240 $KS task init --name team_rmsnorm --kernel kernels/rmsnorm/baseline.cu --op rmsnorm --out "$T"
cp -r "$T/team_rmsnorm" "$OUT/team_rmsnorm" 2>/dev/null
step gemm-folder 200 $KS eval gemm_cute kernels/gemm_cute/baseline/ --scenarios quick --out "$OUT/gemm-folder.json"
step gemm-compile 150 $KS eval gemm_cute kernels/gemm_cute/baseline/ --compile-only
step triton 230 $KS eval softmax_triton kernels/softmax_triton/baseline.py --scenarios quick --out "$OUT/triton.json"
step check 240 $KS tasks --check
for s in init gemm-folder gemm-compile triton check; do
  echo "== $s"; tail -n 12 "$OUT/$s.log"
done
