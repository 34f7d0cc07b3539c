#!/usr/bin/env bash
# The GPU acceptance checks of the harness and the queue on one H200 (the device tool's
# `nvidia-h200` kind), from the repository root, with .carry/host carried (run
# `bash scripts/pack-gpu-host.sh` here first). One GPU, one lane: four parts, each under 10
# minutes, one device call each; a part packs what it has done into $OUT/<lane>.tgz after every
# step, so a cut call still returns it.
#
#   KS_COMMIT=<this tree's commit> OUT=/tmp/out PART=1 bash scripts/gpu/verify.sh
#     the CUDA pytest checks of the stream probe and the failure modes (both baselines' quick
#     evaluations, hack03/hack04 caught at run time, an illegal address, a hang), then two full
#     flash_attn_fwd evaluations of the baseline back to back (every scenario, candidate and
#     baseline timed, peers left out) for repeatability.
#   PART=2: scripts/gpu-e2e.sh: Redis, a gpu-worker, `kernelseek eval --remote`, JOBS paired jobs.
#   PART=3: `kernelseek eval flash_attn_fwd kernels/flash_attn_fwd/baseline.cu --out …`: the full
#     evaluation with baseline and peers (its wall time, table and JSON, checked by the schema).
#   PART=4: every CUDA adversarial candidate (hack* and issue 13's trust*), rmsnorm's full
#     evaluation, the rest of harness/tests/test_cuda.py.
set -u
: "${OUT:?set OUT}"
PART=${PART:?set PART to 1, 2, 3 or 4}
W=/tmp/ks-verify; rm -rf "$W"; mkdir -p "$W"
export PYTHONUNBUFFERED=1
PY=${KERNELSEEK_PYTHON:-python3}
# shellcheck disable=SC1091
source scripts/gpu-host-env.sh
{ date -u; nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv
  echo "commit ${KS_COMMIT:-unknown (set KS_COMMIT: the device copy has another git HEAD)}"; node --version; } > "$OUT/env.txt" 2>&1

# step LANE NAME TIMEOUT CMD... : run one step of a lane, note its exit status and wall time.
step() {
  local lane=$1 name=$2 t=$3 t0; shift 3; t0=$(date +%s)
  timeout --kill-after=10 "$t" "$@" > "$W/$lane/$name.log" 2>&1
  echo "$name: rc=$? wall=$(( $(date +%s) - t0 ))s" >> "$W/$lane/walls.txt"
  tar -czf "$OUT/$lane.tgz" -C "$W/$lane" .
}

F=kernels/flash_attn_fwd
R=kernels/rmsnorm
lane0_part1() {
  export CUDA_VISIBLE_DEVICES=0 KERNELSEEK_DATA_DIR=$W/gpu0/data
  step gpu0 pytest-probe 150 "$PY" -m pytest -q -rs harness/tests/test_cuda.py \
    -k "baseline_quick or illegal or hanging or hack03 or hack04"
  for run in a b; do
    step gpu0 "flash-$run" 215 "$PY" -m harness eval --task-dir $F --candidate $F/baseline.cu --no-peers \
      --json "$W/gpu0/flash-$run.json" --table --timeout 200
  done
  "$PY" -m tools.lab.compare_results repeat "$W/gpu0/flash-a.json" "$W/gpu0/flash-b.json" > "$W/gpu0/repeat.txt" 2>&1
  tar -czf "$OUT/gpu0.tgz" -C "$W/gpu0" .
}
lane1_part1() {
  mkdir -p "$W/gpu1/e2e"
  step gpu1 e2e 575 env OUT="$W/gpu1/e2e" GPU=0 DEADLINE="${E2E_DEADLINE:-540}" JOBS="${JOBS:-20}" bash scripts/gpu-e2e.sh
}
lane0_part2() {
  export CUDA_VISIBLE_DEVICES=0 KERNELSEEK_DATA_DIR=$W/gpu0/data
  step gpu0 flash-full 330 node bin/kernelseek.js eval flash_attn_fwd $F/baseline.cu --out "$W/gpu0/flash-full.json" --timeout 320s
  step gpu0 check-result 60 "$PY" -m harness check-result "$W/gpu0/flash-full.json"
}
lane1_part2() {
  export CUDA_VISIBLE_DEVICES=0 KERNELSEEK_DATA_DIR=$W/gpu1/data
  step gpu1 adversarial-cuda 200 "$PY" -m harness.adversarial.run harness/adversarial/cuda/manifest.yaml \
    --json "$W/gpu1/adversarial-cuda.json"
  "$PY" -m tools.lab.compare_results adversarial "$W/gpu1/adversarial-cuda.json" > "$W/gpu1/adversarial.txt" 2>&1
  step gpu1 rmsnorm 90 "$PY" -m harness eval --task-dir $R --candidate $R/baseline.cu \
    --json "$W/gpu1/rmsnorm.json" --table --timeout 80
  step gpu1 pytest-rest 150 "$PY" -m pytest -q -rs harness/tests/test_cuda.py \
    -k "not baseline_quick and not illegal and not hanging and not caught_at_run_time"
}

T0=$(date +%s)
mkdir -p "$W/gpu0" "$W/gpu1"
case "$PART" in
  1) lane0_part1 ;;
  2) lane1_part1 ;;
  3) lane0_part2 ;;
  4) lane1_part2 ;;
  *) echo "PART must be 1, 2, 3 or 4" >&2; exit 2 ;;
esac
echo "== part $PART: $(( $(date +%s) - T0 ))s"
for lane in gpu0 gpu1; do [ -f "$W/$lane/walls.txt" ] && { echo "-- $lane"; cat "$W/$lane/walls.txt"; }; done
case "$PART" in
  1) echo "-- probe pytest"; tail -n 5 "$W/gpu0/pytest-probe.log"
     echo "-- repeatability"; cat "$W/gpu0/repeat.txt" ;;
  2) echo "-- e2e"; tail -n 25 "$W/gpu1/e2e.log" ;;
  3) echo "-- flash full"; tail -n 8 "$W/gpu0/flash-full.log"; cat "$W/gpu0/check-result.log" ;;
  4) echo "-- adversarial"; cat "$W/gpu1/adversarial.txt"
     echo "-- rmsnorm"; tail -n 4 "$W/gpu1/rmsnorm.log"
     echo "-- pytest"; tail -n 5 "$W/gpu1/pytest-rest.log" ;;
esac
exit 0
