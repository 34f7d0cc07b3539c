#!/usr/bin/env bash
# Issue 39: the bound requests' batch mode on one H100/H200 (device tool), from the repository root,
# with .carry/host carried (bubblewrap's .deb: `bash scripts/pack-gpu-host.sh`). About 500 s:
#   KS_COMMIT=<this tree's commit> OUT=/tmp/out bash scripts/gpu/bound-batch-check.sh
# 1. trust-cuda-check.sh's batch step: the CUDA adversarial and honest set, rmsnorm's and flash's
#    baselines twice each (the peers measured, then kept: the A/A and the budgets), all in batch mode,
#    as far as DEADLINE (seconds, default 360) allows;
# 2. the Triton example's baseline against itself in batch mode (kernels/softmax_triton: its bound
#    requests go through the Python executor's loop, a request's own costs ~0.6 ms).
# Seven files come back (the device tool returns at most eight): softmax-batch.json and .log, the
# trust script's summary.txt, walls.txt, trust.tgz (every log and JSON) and stdout.txt, and
# bound-slack.txt (compare_results bound over the batch-mode results: the margins' calibration).
set -u
: "${OUT:?set OUT}"
export PYTHONUNBUFFERED=1 KERNELSEEK_DATA_DIR=${KERNELSEEK_DATA_DIR:-/tmp/ks-exec/data}
mkdir -p /tmp/kshost/bw "$KERNELSEEK_DATA_DIR"
for d in .carry/host/debs/bubblewrap*.deb; do [ -f "$d" ] && dpkg -x "$d" /tmp/kshost/bw; done
OUT="$OUT" STEPS=batch DEADLINE=${DEADLINE:-360} bash "$(dirname "$0")/trust-cuda-check.sh" > "$OUT/stdout.txt" 2>&1
S=kernels/softmax_triton
PATH="/tmp/kshost/bw/usr/bin:$PATH" timeout --kill-after=5 130 "${KERNELSEEK_PYTHON:-python3}" -m harness eval \
  --task-dir $S --candidate $S/baseline.py --bound-batch --json "$OUT/softmax-batch.json" --table --timeout 110 \
  > "$OUT/softmax-batch.log" 2>&1
echo "softmax-batch: rc=$?" >> "$OUT/softmax-batch.log"
# each floor's slack per scenario (tools/lab/compare_results.py bound): the margins' calibration
J=/tmp/ks-trust
"${KERNELSEEK_PYTHON:-python3}" -m tools.lab.compare_results bound $(ls "$J"/adversarial-batch.json "$J"/rmsnorm-batch*.json \
  "$J"/flash-batch*.json "$OUT/softmax-batch.json" 2>/dev/null) > "$OUT/bound-slack.txt" 2>&1
grep -E '^(task|geomean|time spent)|rc=' "$OUT/softmax-batch.log"
cat "$OUT/summary.txt"
tail -n 3 "$OUT/bound-slack.txt"
