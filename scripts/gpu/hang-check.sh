#!/usr/bin/env bash
# Issue 39: why a candidate with streams of its own stopped answering in batch mode's bound requests
# (the H200 run at 3701340: trust8_pad_side_stream on r4096-c8192, forge7 and trust8_pad_nonblocking on
# the batch scenario after the one they were caught on: "no progress for 60 s while running
# candidate"). Its first case's dump on an H100 showed both executors idle in bound.c's read and the
# parent waiting: a session left open by an exception (fixed in 88b17e9, docs/harness-lab.md,
# 2026-12-07); kept as the way to see where an executor waits. From the repository root, with
# .carry/host carried; about 3 minutes:
#   KS_COMMIT=<this tree's commit> OUT=/tmp/out bash scripts/gpu/hang-check.sh
# Each case is one evaluation (--bound-batch, no peers, a 20 s call timeout) while every executor's
# threads (their kernel wait channel, system call and state, /proc/PID/stack) and the GPU are written
# down every 2 s into procs-CASE.txt: as it is (chained batches on the bound's own slots), with the
# batches unchained (bound.chain_of answers None), and with the rounds' slots only (BoundRoom.widen
# answers False); CASES picks some (default all five). In $OUT: hang.tgz (every log, JSON and dump) and summary.txt.
set -u
: "${OUT:?set OUT}"
PACK=hang
. "$(dirname "$0")/lib.sh"
T8=harness/adversarial/cuda/trust8_pad_side_stream.cu
F7=harness/adversarial/cuda/forge7_bound_calls_overlap.cu

watch() {   # watch CASE: every executor's threads, every 2 s, until killed
  while true; do
    { echo "-- $(date +%T.%N | cut -c1-12)"
      nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader
      for p in $(pgrep -f "harness.executor|python_candidate|process.py"); do
        echo "== pid $p: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-160)"
        for t in /proc/$p/task/*; do
          echo "   $(basename $t) $(awk '{print $3}' $t/stat 2>/dev/null) wchan=$(cat $t/wchan 2>/dev/null)" \
               "syscall=$(cut -d' ' -f1-3 $t/syscall 2>/dev/null) comm=$(cat $t/comm 2>/dev/null)"
        done
        head -8 /proc/$p/stack 2>/dev/null | sed 's/^/   | /'
      done; } >> "$OUT/procs-$1.txt" 2>&1
    sleep 2
  done
}

case_() {   # case_ NAME CANDIDATE SCENARIOS PATCH: one evaluation under watch
  local name=$1 cand=$2 scen=$3 patch=$4
  watch "$name" & local w=$!
  step "$name" 150 "$PY" - "$cand" "$scen" "$OUT/$name.json" <<PYEOF
import sys
from harness.timing import bound, cuda_loop
$patch
from harness.cli import main
sys.exit(main(["eval", "--task-dir", "kernels/rmsnorm", "--candidate", sys.argv[1], "--scenarios", sys.argv[2],
               "--no-peers", "--bound-batch", "--call-timeout", "20", "--json", sys.argv[3], "--table"]))
PYEOF
  kill $w 2>/dev/null; wait $w 2>/dev/null
  pack
}

CASES=${CASES:-t8-as-is t8-unchained t8-rounds-slots f7-as-is f7-unchained}
for c in $CASES; do case $c in
t8-as-is) case_ $c "$T8" r4096-c8192 "pass" ;;
t8-unchained) case_ $c "$T8" r4096-c8192 "bound.chain_of = lambda task, slot: None" ;;
t8-rounds-slots) case_ $c "$T8" r4096-c8192 "cuda_loop.BoundRoom.widen = lambda self, job, names, want: False" ;;
f7-as-is) case_ $c "$F7" r4096-c8192,r1000-c4097 "pass" ;;
f7-unchained) case_ $c "$F7" r4096-c8192,r1000-c4097 "bound.chain_of = lambda task, slot: None" ;;
esac; done

"$PY" - "$OUT" > "$OUT/summary.txt" 2>&1 <<'PYEOF'
import json, sys
from pathlib import Path
W = Path(sys.argv[1])
print((W / "walls.txt").read_text())
for case in ("t8-as-is", "t8-unchained", "t8-rounds-slots", "f7-as-is", "f7-unchained"):
    try:
        r = json.loads((W / f"{case}.json").read_text())
    except (OSError, ValueError) as e:
        print(case, "no result:", e)
        continue
    print(case, r["status"], r["summary"].get("speedup_vs_baseline_geomean"))
    for s in r["scenarios"]:
        b = (s.get("timing") or {}).get("bound") or {}
        print("  ", s["id"], s["status"], (s.get("reason") or "")[:160], "| bound", b.get("mode"), b.get("calls"),
              b.get("slots"), b.get("pairs"), b.get("stopped"), b.get("chain"), b.get("factor"))
    procs = W / f"procs-{case}.txt"
    if procs.exists():     # the last dump: where each thread waited
        text = procs.read_text().split("\n-- ")
        print("   a dump 8 s before its end:", ("-- " + text[max(0, len(text) - 5)])[:1500].replace("\n", "\n     "))
PYEOF
cat "$OUT/summary.txt"
