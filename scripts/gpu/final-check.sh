#!/usr/bin/env bash
# On the H200 (device tool), from the repository root, with .carry/host carried
# (bash scripts/pack-gpu-host.sh here first): the CUDA harness tests that exercise the stream probe
# and the timing checks (baselines' quick evaluations, side-stream, deferred-work and host-thread
# candidates, an illegal address, a hanging kernel), then the queue's end-to-end run
# (scripts/gpu-e2e.sh: Redis, a gpu-worker, eval --remote, paired overhead jobs).
# Results are packed into $OUT/final-check.tgz after each part.
set -u
: "${OUT:?set OUT}"
W=/tmp/ks-final; rm -rf "$W"; mkdir -p "$W/e2e"
export PYTHONUNBUFFERED=1 KERNELSEEK_DATA_DIR=/tmp/ks-data
pack() { tar -czf "$OUT/final-check.tgz" -C "$W" .; }
T0=$(date +%s)
timeout --kill-after=5 110 python3 -m pytest -q -rs harness/tests/test_cuda.py \
  -k "baseline_quick or illegal or hanging or hack02 or hack03 or hack04" > "$W/pytest-cuda.log" 2>&1
echo "pytest-cuda rc=$? $(( $(date +%s) - T0 ))s"; tail -n 6 "$W/pytest-cuda.log"; pack
# shellcheck disable=SC1091
source scripts/gpu-host-env.sh
node --version; redis-server --version | head -c 60; echo
OUT="$W/e2e" DEADLINE=${E2E_DEADLINE:-320} JOBS=20 timeout --kill-after=5 360 bash scripts/gpu-e2e.sh > "$W/e2e.log" 2>&1
echo "gpu-e2e rc=$? total $(( $(date +%s) - T0 ))s"; tail -n 25 "$W/e2e.log"; pack
exit 0
