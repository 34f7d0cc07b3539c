#!/usr/bin/env bash
# On the H200 (device tool), from the repository root: the harness acceptance steps that remain
# after scripts/gpu/harness-flash.sh — two evaluations of the flash_attn_fwd baseline back to back
# for timing repeatability (candidate and baseline timed, peers left out: the per-scenario
# repeatability of the kernel's own time is what is measured), the rmsnorm baseline with its peers,
# every CUDA adversarial candidate, and the CUDA pytest suite. Packed into $OUT/harness-repeat.tgz.
#   OUT=/tmp/out bash scripts/gpu/harness-repeat.sh
set -u
: "${OUT:?set OUT}"
W=/tmp/ks-harness-repeat; rm -rf "$W"; mkdir -p "$W"
export PYTHONUNBUFFERED=1 KERNELSEEK_DATA_DIR=/tmp/ks-data
PY=${KERNELSEEK_PYTHON:-python3}
T0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; git rev-parse HEAD 2>/dev/null; } > "$W/env.txt" 2>&1
step() {  # step NAME TIMEOUT CMD...
  local name=$1 t=$2 t0; shift 2; t0=$(date +%s)
  timeout --kill-after=10 "$t" "$@" > "$W/$name.log" 2>&1
  echo "$name: rc=$? wall=$(( $(date +%s) - t0 ))s" | tee -a "$W/walls.txt"; tail -n 2 "$W/$name.log"
  tar -czf "$OUT/harness-repeat.tgz" -C "$W" .   # what is done so far comes back even if the call is cut
}
F=kernels/flash_attn_fwd
step flash-a 150 "$PY" -m harness eval --task-dir $F --candidate $F/baseline.cu --no-peers --json "$W/flash-a.json" --table --timeout 140
step flash-b 150 "$PY" -m harness eval --task-dir $F --candidate $F/baseline.cu --no-peers --json "$W/flash-b.json" --table --timeout 140
"$PY" -m harness.tools.compare_results repeat "$W/flash-a.json" "$W/flash-b.json" > "$W/repeat.txt" 2>&1
R=kernels/rmsnorm
step rmsnorm 50 "$PY" -m harness eval --task-dir $R --candidate $R/baseline.cu --json "$W/rmsnorm.json" --table --timeout 40
step adversarial-cuda 110 "$PY" -m harness.adversarial.run harness/adversarial/cuda/manifest.yaml --json "$W/adversarial-cuda.json"
"$PY" -m harness.tools.compare_results adversarial "$W/adversarial-cuda.json" > "$W/adversarial.txt" 2>&1
step pytest-cuda 90 "$PY" -m pytest -q -rs harness/tests/test_cuda.py --deselect harness/tests/test_cuda.py::test_cuda_candidate_caught_at_run_time
tar -czf "$OUT/harness-repeat.tgz" -C "$W" .
echo "== total $(( $(date +%s) - T0 ))s"; cat "$W/walls.txt"
echo "-- repeatability"; cat "$W/repeat.txt"; echo "-- adversarial"; cat "$W/adversarial.txt"
echo "-- rmsnorm"; tail -n 3 "$W/rmsnorm.log"; echo "-- pytest"; tail -n 5 "$W/pytest-cuda.log"
exit 0
