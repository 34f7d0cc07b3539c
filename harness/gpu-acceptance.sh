#!/usr/bin/env bash
# GPU acceptance for the harness, in one run on the H200 (or any sm_90 GPU). From the repository root:
#
#     OUT=/some/folder bash harness/gpu-acceptance.sh
#
# Everything lands under $OUT; a short table is printed last. The run stays under 9 minutes: the
# steps share ACCEPTANCE_SECONDS (default 500; plus at most ~30 s of grace and the report), each has
# a cap, and later steps get what is left, so a slow step shortens the ones after it. Steps:
#   1. full evaluation of kernels/flash_attn_fwd with its baseline as the candidate (JSON, table, wall time)
#   2. the same evaluation again: repeatability of per-scenario median times (median and max difference)
#   3. full evaluation of kernels/rmsnorm with its baseline
#   4. every CUDA adversarial candidate (harness/adversarial/cuda) against kernels/rmsnorm
#   5. pytest: the CUDA tests, the fast unit tests and one CPU evaluation on this torch (the CPU
#      failure and adversarial sets are CPU-only and left to CI; the CUDA adversarial set ran in step 4
#      and the baselines' quick evaluations are covered by steps 1-3)
#   6. reports: repeatability, peer TFLOP/s next to ANCHORS.md, summaries, adversarial outcomes
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to a folder for the results}"
mkdir -p "$OUT"
START=$(date +%s)
BUDGET=${ACCEPTANCE_SECONDS:-500}
export PYTHONUNBUFFERED=1
# One compile cache for every step (pytest's CUDA tests use the default cache under this folder).
export KERNELSEEK_DATA_DIR=${KERNELSEEK_DATA_DIR:-/tmp/kernelseek-acceptance}

if [ -n "${KERNELSEEK_PYTHON:-}" ]; then PY=$KERNELSEEK_PYTHON
else
  PY=""
  for c in python3 /usr/bin/python3; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import torch, yaml, pytest' >/dev/null 2>&1; then PY=$c; break; fi
  done
  [ -n "$PY" ] || { echo "no python3 with torch, yaml and pytest" >&2; exit 2; }
fi
export KERNELSEEK_PYTHON=$PY

left() { echo $(( BUDGET - ($(date +%s) - START) )); }
cap() {  # cap SECONDS RESERVE: the smaller of SECONDS and what is left after RESERVE for later steps
  local want=$1 reserve=$2 l
  l=$(( $(left) - reserve ))
  [ "$l" -lt "$want" ] && want=$l
  [ "$want" -lt 10 ] && want=10
  echo "$want"
}
STEPS="$OUT/steps.tsv"
printf 'step\trc\tseconds\tcap\n' > "$STEPS"
run_step() {  # run_step NAME CAP GRACE CMD...: output to $OUT/NAME.log; killed GRACE s after CAP
  local name=$1 c=$2 grace=$3 t0 rc   # (harness evaluations stop themselves at CAP: grace lets them write)
  shift 3
  echo "== $name (cap ${c}s, $(left)s left)"
  t0=$(date +%s)
  timeout --kill-after=5 $(( c + grace )) "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" "$c" >> "$STEPS"
  tail -n 3 "$OUT/$name.log"
}

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  "$PY" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "gpu", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)'
  ${KERNELSEEK_NVCC:-nvcc} --version | tail -n 2
  git rev-parse HEAD 2>/dev/null
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

FLASH=kernels/flash_attn_fwd
RMS=kernels/rmsnorm
# Caps (seconds): flash 130 + 130, rmsnorm 45, adversarial 100, pytest what is left (>= ~60).
# A flash evaluation that hits its cap stops with status timeout and reports the scenarios it ran;
# repeatability is then computed over the scenarios both runs completed.
for run in 1 2; do
  c=$(cap 130 $(( run == 1 ? 345 : 215 )))
  run_step "flash-$run" "$c" 20 "$PY" -m harness eval --task-dir "$FLASH" --candidate "$FLASH/baseline.cu" \
    --json "$OUT/flash-$run.json" --table --progress jsonl --timeout $(( c - 10 ))
done
c=$(cap 45 170)
run_step rmsnorm "$c" 15 "$PY" -m harness eval --task-dir "$RMS" --candidate "$RMS/baseline.cu" \
  --json "$OUT/rmsnorm.json" --table --timeout $(( c - 5 ))
c=$(cap 100 70)
run_step adversarial-cuda "$c" 0 "$PY" -m harness.adversarial.run harness/adversarial/cuda/manifest.yaml \
  --json "$OUT/adversarial-cuda.json" --cache-dir "$KERNELSEEK_DATA_DIR/compile-cache"
c=$(cap 400 10)
run_step pytest "$c" 0 "$PY" -m pytest -v -rs --junitxml="$OUT/pytest.xml" \
  harness/tests/test_cuda.py harness/tests/test_task_loading.py harness/tests/test_scenarios.py \
  harness/tests/test_tolerance.py harness/tests/test_static_checks.py harness/tests/test_tools.py \
  harness/tests/test_timing_rules.py harness/tests/test_build.py \
  harness/tests/test_cpu_eval.py \
  --deselect harness/tests/test_cuda.py::test_cuda_candidate_caught_at_run_time \
  --deselect harness/tests/test_cuda.py::test_baseline_quick_eval

report() {
  echo "== harness GPU acceptance ($(( $(date +%s) - START )) s)"
  column -t -s $'\t' "$STEPS" 2>/dev/null || cat "$STEPS"
  for f in flash-1 flash-2 rmsnorm; do
    [ -f "$OUT/$f.json" ] && "$PY" -m harness.tools.compare_results summary "$OUT/$f.json" | sed "s/^/$f: /"
  done
  if [ -f "$OUT/flash-1.json" ] && [ -f "$OUT/flash-2.json" ]; then
    echo "-- repeatability (flash-1 vs flash-2, per-scenario median time)"
    "$PY" -m harness.tools.compare_results repeat "$OUT/flash-1.json" "$OUT/flash-2.json"
  fi
  [ -f "$OUT/flash-1.json" ] && { echo "-- peer TFLOP/s vs ANCHORS.md"; "$PY" -m harness.tools.compare_results anchors "$OUT/flash-1.json"; }
  [ -f "$OUT/adversarial-cuda.json" ] && { echo "-- CUDA adversarial"; "$PY" -m harness.tools.compare_results adversarial "$OUT/adversarial-cuda.json"; }
  echo "-- pytest"
  grep -E "^(=+ .*(passed|failed|error).*=+|FAILED|ERROR)" "$OUT/pytest.log" | tail -n 15
}
report | tee "$OUT/summary.txt"
