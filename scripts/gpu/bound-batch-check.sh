#!/usr/bin/env bash
# Issue 39: the bound requests' batch mode on one H100/H200 (device tool), from the repository root,
# with .carry/host carried (bubblewrap's .deb: `bash scripts/pack-gpu-host.sh`). About 500 s:
#   KS_COMMIT=<this tree's commit> OUT=/tmp/out bash scripts/gpu/bound-batch-check.sh
# 1. trust-cuda-check.sh's batch step: the CUDA adversarial and honest set, rmsnorm's and flash's
#    baselines twice each (the peers measured, then kept: the A/A and the budgets), all in batch mode,
#    as far as DEADLINE (seconds, default 360) allows;
# 2. the Triton example's baseline against itself in batch mode (kernels/softmax_triton: its bound
#    requests go through the Python executor's loop, a request's own costs ~0.6 ms);
# 3. each floor's slack per scenario over the batch-mode results (compare_results bound): the margins'
#    calibration, in bound-slack.txt.
# In $OUT: summary.txt (the three, in short) and bound.tgz (every file, trust/trust.tgz with every
# log and JSON of step 1).
set -u
: "${OUT:?set OUT}"
PACK=bound
. "$(dirname "$0")/lib.sh"
mkdir -p "$OUT/trust"
OUT="$OUT/trust" STEPS=batch DEADLINE=${DEADLINE:-360} bash "$(dirname "$0")/trust-cuda-check.sh" \
  > "$OUT/trust/stdout.txt" 2>&1
pack
S=kernels/softmax_triton
step softmax-batch 130 "$PY" -m harness eval --task-dir $S --candidate $S/baseline.py --bound-batch \
  --json "$OUT/softmax-batch.json" --table --timeout 110
J=/tmp/ks-trust      # trust-cuda-check.sh's own folder (PACK=trust)
"$PY" -m tools.lab.compare_results bound $(ls "$J"/adversarial-batch.json "$J"/rmsnorm-batch*.json \
  "$J"/flash-batch*.json "$OUT/softmax-batch.json" 2>/dev/null) > "$OUT/bound-slack.txt" 2>&1
{ cat "$OUT/trust/summary.txt"; echo "== the Triton example, batch mode"; cat "$OUT/walls.txt"
  grep -E '^(task|geomean|time spent)' "$OUT/softmax-batch.log"; echo "== each floor's slack"
  tail -n 3 "$OUT/bound-slack.txt"; } > "$OUT/summary.txt"
cat "$OUT/summary.txt"
