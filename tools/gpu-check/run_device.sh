#!/bin/bash
# One device call: compile both baselines, check every scenario of both tasks, time them against
# the peers, and leave full logs in $OUT. Run from a folder holding kernels/ and tools/gpu-check/:
#   PYTHONUNBUFFERED=1 bash tools/gpu-check/run_device.sh
set -u
OUT=${OUT:-/tmp/gpu-check-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
T0=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
  nvcc --version | tail -1; } 2>&1 | tee "$OUT/env.txt"

python3 tools/gpu-check/check.py kernels/rmsnorm kernels/rmsnorm/baseline.cu --time all --reps 20 \
  --log "$OUT/results.jsonl" > "$OUT/rmsnorm.log" 2>&1
echo "rmsnorm rc=$? ($(( $(date +%s) - T0 ))s)"
python3 tools/gpu-check/check.py kernels/flash_attn_fwd kernels/flash_attn_fwd/baseline.cu --time all --reps 10 \
  --budget "${FA_BUDGET:-200}" --log "$OUT/results.jsonl" > "$OUT/flash.log" 2>&1
echo "flash rc=$? ($(( $(date +%s) - T0 ))s)"

# Race and memory checks of the flash kernel on small odd shapes, while time is left (bounded).
if [ -n "${SANITIZE:-}" ]; then
  for tool in racecheck memcheck; do
    [ $(( $(date +%s) - T0 )) -lt "${SANITIZE_BEFORE:-210}" ] || { echo "$tool skipped: no time left"; continue; }
    timeout "${SANITIZE_TIMEOUT:-35}" compute-sanitizer --tool $tool --kernel-name kns=flash_fwd \
      python3 tools/gpu-check/check.py kernels/flash_attn_fwd kernels/flash_attn_fwd/baseline.cu \
      --only sq113-sk113-d96 --seeds 1 --time none > "$OUT/sanitize-$tool.log" 2>&1
    echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^correct' "$OUT/sanitize-$tool.log" | tr '\n' ' ')"
  done
fi

# Compact summary (the full tables are in $OUT/*.log).
grep -hE '^compiled|scenarios on|^correct:|speedup|budget|done in' "$OUT/rmsnorm.log" "$OUT/flash.log"
python3 tools/gpu-check/summary.py "$OUT/results.jsonl"
echo "total $(( $(date +%s) - T0 ))s"
