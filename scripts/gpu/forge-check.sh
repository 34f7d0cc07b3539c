#!/usr/bin/env bash
# Issue 39, the short GPU call: the figure forgers of the CUDA set (forge1-forge7 and their controls) in
# batch mode, and why a candidate with a stream of its own stopped answering there (hang-check.sh's
# first cases). From the repository root, with .carry/host carried; about 4 minutes:
#   KS_COMMIT=<this tree's commit> OUT=/tmp/out bash scripts/gpu/forge-check.sh
# In $OUT: summary.txt (each forger's outcome, each floor's slack per scenario, the hang's dumps in
# short) and forge.tgz (every log and JSON, hang.tgz inside).
set -u
: "${OUT:?set OUT}"
PACK=forge
. "$(dirname "$0")/lib.sh"
mkdir -p "$OUT/hang"
OUT="$OUT/hang" CASES=${CASES:-"t8-as-is t8-unchained"} timeout 110 bash "$(dirname "$0")/hang-check.sh" \
  > "$OUT/hang-stdout.txt" 2>&1
pack
step forges 170 "$PY" -m harness.adversarial.run harness/adversarial/cuda/manifest.yaml --only forge --bound-batch \
  --call-timeout 20 --json "$OUT/forges.json"
"$PY" -m tools.lab.compare_results bound "$OUT/forges.json" > "$OUT/forges-slack.txt" 2>&1
{ cat "$OUT/walls.txt"; echo "== forgers, batch mode"; grep -E "caught|NOT" "$OUT/forges.log"
  echo "== each floor's slack"; cat "$OUT/forges-slack.txt"; echo "== hang-check"; cat "$OUT/hang/summary.txt"; } \
  > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
