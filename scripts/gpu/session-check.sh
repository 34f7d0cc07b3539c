#!/usr/bin/env bash
# One device call for issues 39 and 40 on one H100/H200, from the repository root (about 560 s):
#   KS_COMMIT=<sha> OUT=/tmp/out bash scripts/gpu/session-check.sh
# Carry .carry/host/debs (bubblewrap's .deb: `apt-get download bubblewrap` there) and
# .carry/cutlass-include.tar.xz (CUTLASS v4.7.0's include/: `git -C <cutlass clone> archive v4.7.0
# include | xz > .carry/cutlass-include.tar.xz`; 1 MB where the headers are 26 MB).
# 1. trust-cuda-check.sh's load39, adversarial, rms and flash steps (issue 39: the CUDA adversarial and
#    honest sets; rmsnorm and flash full, then with the peers kept: the budgets 15 s and 45 s, the A/A);
# 2. way-in-check.sh (issue 40: the CuTe example's compile-only and full evaluation, the Triton
#    example's full evaluation, against their peers).
# In $OUT: summary.txt (both summaries) and session.tgz (trust/ and wayin/: each script's own files).
# PART=2 (about 500 s; carry .carry/host as well: `bash scripts/pack-gpu-host.sh`): the Triton example
# alone, sandbox-check.sh (the root service's gpu_bash sandbox), then trust-cuda-check.sh's rms, flash
# and adversarial steps (TRUST_STEPS, TRUST_DEADLINE; TRUST_STEPS="batch adversarial" sets the bound's
# batch mode beside the single-call one on the adversarial set, rmsnorm and flash).
set -u
: "${OUT:?set OUT}"
PACK=session    # everything in $OUT/session.tgz, summary.txt beside it (lib.sh)
. "$(dirname "$0")/lib.sh"
if [ "${PART:-1}" = 2 ]; then
  mkdir -p "$OUT/trust" "$OUT/sandbox"
  S=kernels/softmax_triton
  step softmax-full 120 "$PY" -m harness eval --task-dir $S --candidate $S/baseline.py --json "$OUT/softmax-full.json" \
    --table --timeout 100
  pack
  OUT="$OUT/sandbox" timeout --kill-after=5 130 bash scripts/gpu/sandbox-check.sh > "$OUT/sandbox/stdout.txt" 2>&1
  echo "sandbox-check.sh: rc=$?" >> "$OUT/walls.txt"
  pack
  OUT="$OUT/trust" STEPS="${TRUST_STEPS:-rms flash adversarial}" DEADLINE="${TRUST_DEADLINE:-330}" \
    bash scripts/gpu/trust-cuda-check.sh > "$OUT/trust/stdout.txt" 2>&1
  { cat "$OUT/walls.txt"; grep -E '^(task|geomean|time spent)' "$OUT/softmax-full.log"; tail -n 3 "$OUT/softmax-full.log"
    echo "== sandbox"; tail -n 25 "$OUT/sandbox/stdout.txt"; echo "== trust"; cat "$OUT/trust/summary.txt"; } > "$OUT/summary.txt"
  cat "$OUT/summary.txt"
  exit 0
fi
mkdir -p "$OUT/trust" "$OUT/wayin" /tmp/ks-cutlass
if [ -f .carry/cutlass-include.tar.xz ]; then
  tar -C /tmp/ks-cutlass -xJf .carry/cutlass-include.tar.xz
  export KERNELSEEK_CUTLASS_DIR=/tmp/ks-cutlass
fi
start=$(date +%s)
OUT="$OUT/trust" STEPS="${TRUST_STEPS:-load39 adversarial rms flash}" DEADLINE="${TRUST_DEADLINE:-380}" \
  bash scripts/gpu/trust-cuda-check.sh > "$OUT/trust/stdout.txt" 2>&1
echo "trust-cuda-check.sh: $(( $(date +%s) - start )) s" > "$OUT/walls.txt"
pack
mid=$(date +%s)
OUT="$OUT/wayin" COMPILE_T=${COMPILE_T:-40} GEMM_T=${GEMM_T:-60} SOFTMAX_T=${SOFTMAX_T:-90} timeout --kill-after=5 230 bash scripts/gpu/way-in-check.sh > "$OUT/wayin/stdout.txt" 2>&1
echo "way-in-check.sh: rc=$? $(( $(date +%s) - mid )) s" >> "$OUT/walls.txt"
{ cat "$OUT/walls.txt"; echo; cat "$OUT/trust/summary.txt" 2>/dev/null; echo; echo "== way in"; cat "$OUT/wayin/walls.txt" 2>/dev/null
  tail -n 25 "$OUT/wayin/stdout.txt"; } > "$OUT/summary.txt"
cat "$OUT/summary.txt"
