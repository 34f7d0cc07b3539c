#!/usr/bin/env bash
# On the H200 (device tool), from the repository root: a quick smoke evaluation of flash_attn_fwd,
# then, if it passed, two full evaluations of its baseline back to back (correctness on every
# scenario, wall time, repeatability, peer TFLOP/s against ANCHORS.md). If the smoke failed, the
# time goes to the CUDA tests and the CUDA adversarial set instead, to see why.
# Everything is packed into $OUT/harness-flash.tgz; a summary is printed last.
#   OUT=/tmp/out bash scripts/gpu/harness-flash.sh
set -u
: "${OUT:?set OUT}"
W=/tmp/ks-harness-flash; rm -rf "$W"; mkdir -p "$W"
export PYTHONUNBUFFERED=1 KERNELSEEK_DATA_DIR=/tmp/ks-data
PY=${KERNELSEEK_PYTHON:-python3}
FLASH=kernels/flash_attn_fwd
T0=$(date +%s)
since() { echo $(( $(date +%s) - T0 )); }
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  "$PY" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
  nvcc --version | tail -n 2; git rev-parse HEAD 2>/dev/null
} > "$W/env.txt" 2>&1
cat "$W/env.txt"
evaluate() {  # evaluate NAME SCENARIOS TIMEOUT
  local t0=$(date +%s)
  timeout --kill-after=10 $(( $3 + 20 )) "$PY" -m harness eval --task-dir "$FLASH" --candidate "$FLASH/baseline.cu" \
    --scenarios "$2" --json "$W/$1.json" --table --timeout "$3" > "$W/$1.log" 2>&1
  echo "$1: rc=$? wall=$(( $(date +%s) - t0 ))s" | tee -a "$W/walls.txt"
  tail -n 2 "$W/$1.log"
}
evaluate flash-quick quick 110
if "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["status"]=="ok" and r["correct"] else 1)' "$W/flash-quick.json" 2>/dev/null; then
  evaluate flash-1 all 250
  evaluate flash-2 all 250
  {
    echo "-- repeatability"; "$PY" -m harness.tools.compare_results repeat "$W/flash-1.json" "$W/flash-2.json"
    echo "-- peers vs ANCHORS.md"; "$PY" -m harness.tools.compare_results anchors "$W/flash-1.json"
    echo "-- summaries"; "$PY" -m harness.tools.compare_results summary "$W/flash-1.json" "$W/flash-2.json"
  } > "$W/report.txt" 2>&1
else
  echo "smoke failed: running the CUDA tests and adversarial set for diagnosis"
  cat "$W/flash-quick.log" | tail -n 40
  timeout 200 "$PY" -m pytest -x -q -rs harness/tests/test_cuda.py > "$W/pytest-cuda.log" 2>&1; tail -n 30 "$W/pytest-cuda.log"
  timeout 150 "$PY" -m harness.adversarial.run harness/adversarial/cuda/manifest.yaml --json "$W/adversarial-cuda.json" > "$W/adversarial-cuda.log" 2>&1
  tail -n 30 "$W/adversarial-cuda.log"
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$W/env.txt" 2>&1
tar -czf "$OUT/harness-flash.tgz" -C "$W" .
echo "== total $(since)s"; cat "$W/walls.txt"; [ -f "$W/report.txt" ] && cat "$W/report.txt"
exit 0
