#!/usr/bin/env bash
# End to end on a GPU host: Redis, one `kernelseek gpu-worker`, `kernelseek eval --remote` on a
# task's baseline, then >= 20 paired jobs measuring what the queue adds over a direct harness call.
# Writes under $OUT (at most 6 files): summary.json, e2e-result.json, e2e-table.txt, overhead.json,
# queues.txt, worker.log. Finishes in under 8 minutes or stops itself.
#
#   OUT=/tmp/out bash scripts/gpu-e2e.sh                       # the H200: flash_attn_fwd, sm_90
#   OUT=/tmp/out DEVICE=cpu bash scripts/gpu-e2e.sh             # the same logic on a CPU host (cpu_softmax)
#
# Node and Redis: `node`, `redis-server` and `redis-cli` on PATH (scripts/gpu-host-env.sh puts them
# there on the GPU host and is sourced when node is missing), or NODE= and REDIS_SERVER= paths.
# Knobs: TASK, KERNEL, ARCH, GPU (index, default 0), E2E_SCENARIOS (quick), BENCH_SCENARIOS (the
# task's quick scenario with the fewest FLOPs),
# JOBS (20), BENCH_FLAGS (--no-peers --no-baseline: the queue's cost does not depend on them),
# REDIS_PORT (6399), DEADLINE (seconds, 470).
set -euo pipefail
cd "$(dirname "$0")/.."
T0=$(date +%s)
DEADLINE=${DEADLINE:-470}
OUT=${OUT:?set OUT to the folder for the results}
mkdir -p "$OUT"

if ! command -v "${NODE:-node}" >/dev/null 2>&1 && [ -f scripts/gpu-host-env.sh ]; then
  # shellcheck disable=SC1091
  source scripts/gpu-host-env.sh
fi
NODE=${NODE:-$(command -v node)}
REDIS_SERVER=${REDIS_SERVER:-$(command -v redis-server)}
[ -x "$NODE" ] || { echo "gpu-e2e: no node (set NODE=)" >&2; exit 2; }
[ -x "$REDIS_SERVER" ] || { echo "gpu-e2e: no redis-server (set REDIS_SERVER=)" >&2; exit 2; }

DEVICE=${DEVICE:-cuda}
if [ "$DEVICE" = cpu ]; then
  TASK=${TASK:-cpu_softmax}; KERNEL=${KERNEL:-kernels/$TASK/baseline.cpp}; ARCH=${ARCH:-cpu}
  WORKER_ARGS=(--arch cpu); GPU_ARGS=()
else
  TASK=${TASK:-flash_attn_fwd}; KERNEL=${KERNEL:-kernels/$TASK/baseline.cu}; ARCH=${ARCH:-sm_90}; GPU=${GPU:-0}
  WORKER_ARGS=(--gpus "$GPU" --arch "$ARCH"); GPU_ARGS=(--gpu "$GPU")
fi
E2E_SCENARIOS=${E2E_SCENARIOS:-quick}
# One short scenario: the per-job cost of the queue, not the kernel, is what is measured.
BENCH_SCENARIOS=${BENCH_SCENARIOS:-smallest-quick}
JOBS=${JOBS:-20}
read -r -a BENCH_FLAGS <<<"${BENCH_FLAGS---no-peers --no-baseline}"
PORT=${REDIS_PORT:-6399}
WORK=$(mktemp -d /tmp/ks-gpu-e2e.XXXXXX)
export REDIS_URL="redis://127.0.0.1:$PORT"
export KERNELSEEK_QUEUE_PREFIX=gpu-e2e
export KERNELSEEK_DATA_DIR="$WORK/data"
export LOG_LEVEL=info

left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
# Seconds a step may take: what is left minus a reserve for the steps after it (at least 10).
budget() { local b=$(( $(left) - $1 )); [ "$b" -lt 10 ] && b=10; echo "$b"; }
step() { printf '\n== %s (+%ss)\n' "$1" "$(( $(date +%s) - T0 ))"; }
ks() { "$NODE" bin/kernelseek.js "$@"; }

REDIS_PID=""; WORKER_PID=""
cleanup() {
  # The worker first (it closes its Redis connections), then Redis.
  if [ -n "$WORKER_PID" ]; then kill -TERM "$WORKER_PID" 2>/dev/null; wait "$WORKER_PID" 2>/dev/null; fi
  if [ -n "$REDIS_PID" ]; then kill "$REDIS_PID" 2>/dev/null; wait "$REDIS_PID" 2>/dev/null; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

step "redis on port $PORT"
"$REDIS_SERVER" --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
for _ in $(seq 1 50); do
  "$NODE" -e 'const R=require("ioredis");const r=new R(process.env.REDIS_URL,{lazyConnect:true,retryStrategy:()=>null});r.connect().then(()=>r.ping()).then(()=>process.exit(0),()=>process.exit(1))' 2>/dev/null && break
  sleep 0.2
done

step "gpu-worker ${WORKER_ARGS[*]}"
# Started directly (not through a shell function), so that $! is node's pid and SIGTERM reaches it.
"$NODE" bin/kernelseek.js gpu-worker "${WORKER_ARGS[@]}" >"$OUT/worker.log" 2>&1 &
WORKER_PID=$!
for _ in $(seq 1 120); do grep -q 'ready:' "$OUT/worker.log" && break; kill -0 "$WORKER_PID" 2>/dev/null || break; sleep 0.5; done
grep 'ready:' "$OUT/worker.log" || { echo "gpu-e2e: the worker did not start:" >&2; tail -20 "$OUT/worker.log" >&2; exit 1; }

# The end-to-end run leaves about 4 minutes for the overhead pairs.
step "kernelseek eval $TASK $KERNEL --remote --scenarios $E2E_SCENARIOS"
E2E_T0=$(date +%s%N)
set +e
timeout "$(budget 240)" "$NODE" bin/kernelseek.js eval "$TASK" "$KERNEL" --remote --arch "$ARCH" --scenarios "$E2E_SCENARIOS" --json >"$OUT/e2e-result.json" 2>"$WORK/e2e.err"
E2E_CODE=$?
E2E_T1=$(date +%s%N)
# The same job again: served from the finished job (deterministic id), printed as a table.
timeout 120 "$NODE" bin/kernelseek.js eval "$TASK" "$KERNEL" --remote --arch "$ARCH" --scenarios "$E2E_SCENARIOS" >"$OUT/e2e-table.txt" 2>&1
set -e
cat "$OUT/e2e-table.txt"
echo "eval --remote exit status: $E2E_CODE"

step "overhead: $JOBS pairs of direct and queued evaluations (scenarios $BENCH_SCENARIOS)"
BENCH_CODE=0
if [ "$(left)" -gt 30 ]; then
  set +e
  timeout "$(budget 15)" "$NODE" --import tsx bench/queue-overhead.ts --task "$TASK" --kernel "$KERNEL" --arch "$ARCH" \
    --scenarios "$BENCH_SCENARIOS" --jobs "$JOBS" "${GPU_ARGS[@]}" "${BENCH_FLAGS[@]}" --out "$OUT/overhead.json"
  BENCH_CODE=$?
  set -e
else
  echo "gpu-e2e: no time left for the overhead measurement" >&2; BENCH_CODE=124
fi

ks queues >"$OUT/queues.txt" 2>&1 || true
"$NODE" -e '
  const fs = require("fs");
  const read = (f) => { try { return JSON.parse(fs.readFileSync(f, "utf8")); } catch { return null; } };
  const [out, e2eCode, e2eMs, benchCode, task, kernel, scen] = process.argv.slice(1);
  const r = read(out + "/e2e-result.json");
  const o = read(out + "/overhead.json");
  const summary = {
    task, kernel, e2e_scenarios: scen,
    e2e: r && { exit_status: Number(e2eCode), seconds: Number(e2eMs) / 1000, status: r.status, correct: r.correct,
      scenarios: r.summary.scenarios, correct_scenarios: r.summary.correct, gpu: r.gpu, executor: r.executor,
      speedup_vs_peer_geomean: r.summary.speedup_vs_peer_geomean, harness_seconds: r.summary.seconds },
    overhead: o && { jobs: o.jobs, scenarios: o.scenarios, direct_ms: o.direct_ms, remote_ms: o.remote_ms, added_ms: o.added_ms,
      added_by_queue_and_worker_ms: o.added_by_queue_and_worker_ms, statuses: o.statuses },
    overhead_exit_status: Number(benchCode),
  };
  fs.writeFileSync(out + "/summary.json", JSON.stringify(summary, null, 1) + "\n");
  console.log(JSON.stringify(summary, null, 1));
' "$OUT" "$E2E_CODE" "$(( (E2E_T1 - E2E_T0) / 1000000 ))" "$BENCH_CODE" "$TASK" "$KERNEL" "$E2E_SCENARIOS"
step "done"
[ "$E2E_CODE" -eq 0 ] && [ "$BENCH_CODE" -eq 0 ]
