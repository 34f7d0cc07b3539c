#!/usr/bin/env bash
# The harness's timing measured on one GPU host, step by step (issue 14 and after): full and quick
# evaluations, their cProfiles, the CUPTI comparison (tools/lab/cupti_fidelity.py), A/A runs, the
# CUDA adversarial set, and the other lab steps. From the repository root on the GPU host (device
# tool), with .carry/host/debs (bubblewrap's .deb) carried:
#   KS_COMMIT=<this tree's commit> OUT=/tmp/out STEPS="profile full fidelity" bash scripts/gpu/timing-check.sh
# STEPS (default "profile full fidelity") picks the steps, in order: each is a case below, with a
# comment saying what it runs and which variables it reads (AA_RUNS, FID_*, CUDNN_*, FLASH_*, RMS_*,
# EVAL_ARGS for more `harness eval` options, END in seconds: the fidelity steps stop by then).
# Results land in $OUT as each step ends, packed into $OUT/all.tgz at the end (summary.txt beside it).
# What each step was for, and what it found on which day: docs/harness-lab.md.
set -u
: "${OUT:?set OUT}"
. "$(dirname "$0")/lib.sh"
STEPS=${STEPS:-profile full fidelity}
rms_eval() {    # rms_eval NAME: rmsnorm's full evaluation of its baseline, $OUT/NAME.json with every round's figure
  step "$1" 70 "$PY" -m harness eval --task-dir $R --candidate $R/baseline.cu --json "$OUT/$1.json" --table --samples --timeout 65 ${EVAL_ARGS:-}
}
flash_eval() {  # flash_eval NAME: the same for flash_attn_fwd
  step "$1" $(( ${FLASH_TIMEOUT:-203} + 12 )) "$PY" -m harness eval --task-dir $F --candidate $F/baseline.cu --json "$OUT/$1.json" \
    --table --samples --timeout ${FLASH_TIMEOUT:-203} ${EVAL_ARGS:-}
}
flash_prof() {  # flash's full evaluation (the peers kept, after flash-full) under cProfile: $OUT/flash-full-kept-prof.*
  step flash-full-kept-prof 215 "$PY" -m cProfile -o "$OUT/flash-full-kept.prof" -m harness eval --task-dir $F \
    --candidate $F/baseline.cu --json "$OUT/flash-full-kept-prof.json" --timeout 203
  "$PY" -c "import pstats; p = pstats.Stats('$OUT/flash-full-kept.prof'); p.sort_stats('cumulative').print_stats(70); p.sort_stats('tottime').print_stats(30)" \
    > "$OUT/flash-full-kept-prof.txt" 2>&1
}
for s in $STEPS; do case $s in
profile)   # where a quick flash_attn_fwd evaluation spends its time (cProfile of the harness process)
  step flash-quick-prof 90 "$PY" -m cProfile -o "$OUT/flash-quick.prof" -m harness eval --task-dir $F \
    --candidate $F/baseline.cu --scenarios quick --json "$OUT/flash-quick.json" --timeout 80
  "$PY" -c "import pstats; p = pstats.Stats('$OUT/flash-quick.prof'); p.sort_stats('cumulative').print_stats(45); p.sort_stats('tottime').print_stats(25)" \
    > "$OUT/flash-quick-prof.txt" 2>&1 ;;
full)   # rmsnorm's and flash_attn_fwd's full evaluations of the baseline with both peers
  rms_eval rmsnorm-full
  flash_eval flash-full ;;
flash-kept)   # flash_attn_fwd's full evaluation again, after flash-full kept the peers' figures
  flash_eval flash-full-kept ;;
flash-full)   # flash_attn_fwd's full evaluation alone (the peers measured)
  flash_eval flash-full ;;
rms)   # rmsnorm's full evaluation twice, the second with the peers' figures kept (repeatability)
  rms_eval rmsnorm-full
  rms_eval rmsnorm-full-kept ;;
kept)   # both full evaluations again, after `full` kept their peers' figures
  rms_eval rmsnorm-full-kept
  flash_eval flash-full-kept ;;
refcost)   # what flash's trusted side costs per scenario (inputs, reference, lowp), one seed (reference_cost.py;
      # REF_VARIANTS: module:function ... timed beside the reference, with their differences from it)
  step refcost-flash 120 "$PY" -m tools.lab.reference_cost --task-dir $F --scenarios all \
    $(for v in ${REF_VARIANTS:-}; do echo --variant $v; done) --json "$OUT/refcost-flash.json" ;;
profflash)   # where flash's full evaluation with the peers kept spends its time (after flash-full)
  flash_prof ;;
profrms)   # where rmsnorm's evaluation with the peers kept spends its time (after `rms` or `full`)
  step rmsnorm-kept-prof 90 "$PY" -m cProfile -o "$OUT/rmsnorm-kept.prof" -m harness eval --task-dir $R \
    --candidate $R/baseline.cu --json "$OUT/rmsnorm-kept-prof.json" --timeout 80
  "$PY" -c "import pstats; p = pstats.Stats('$OUT/rmsnorm-kept.prof'); p.sort_stats('cumulative').print_stats(60); p.sort_stats('tottime').print_stats(30)" \
    > "$OUT/rmsnorm-kept-prof.txt" 2>&1 ;;
cupti)   # CUPTI's records as harness/executor/cupti_activity.py reads them, on the host
  step cupti-self 60 "$PY" -m harness.executor.cupti_activity ;;
profkept)   # where a full evaluation with the peers' figures kept spends its time (after `full`)
  rms_eval rmsnorm-full-kept
  flash_prof ;;
fidelity-cupti)   # the same, CUPTI read in-process as the harness reads it (32 ns steps), both L2 flushes
  for t in rmsnorm flash; do
    dir=$R; [ $t = flash ] && dir=$F
    [ -f "$OUT/$t-full.json" ] || continue
    for fl in write read; do
      [ $t = flash ] && [ $fl = read ] && continue
      step fidelity-$t-cupti-$fl 150 "$PY" -m tools.lab.cupti_fidelity --task-dir $dir --candidate $dir/baseline.cu \
        --result "$OUT/$t-full.json" --profiler cupti --flush $fl --calls 15 --json "$OUT/fidelity-$t-cupti-$fl.json"
    done
  done ;;
fidelity-cond)   # which of the tool's conditions moves its figures towards the harness's: the flush from
      # another process (the call's context switched back in, as after the harness's parent's flush)
      # and the harness's own pad, on flash's smallest scenarios (sq113) and rmsnorm (after `full`)
  for t in rmsnorm flash; do
    dir=$R sel=all; [ $t = flash ] && dir=$F sel=sq113
    [ -f "$OUT/$t-full.json" ] || continue
    for c in "self sleep" "other sleep" "self harness" "other harness"; do
      set -- $c
      [ "$SECONDS" -lt "${DEADLINE:-100000}" ] || { echo "cond-$t-$1-$2: skipped (deadline)" >> "$OUT/walls.txt"; continue; }
      step cond-$t-$1-$2 120 "$PY" -m tools.lab.cupti_fidelity --task-dir $dir --candidate $dir/baseline.cu \
        --result "$OUT/$t-full.json" --profiler cupti --calls 15 --scenarios $sel --flush-in $1 --pad $2 \
        --json "$OUT/cond-$t-$1-$2.json"
    done
  done ;;
fidelity-like)   # step 3 on CUPTI with the harness's conditions (flush from another process, its pad)
  for lay in ${FID_LAYOUTS:-tool}; do for t in ${FID_TASKS:-rmsnorm flash}; do for imp in ${FID_IMPLS:-all}; do   # FID_IMPLS: e.g. "all torch,torch_rms_norm"
    dir=$R; [ $t = flash ] && dir=$F
    res=$OUT/$t-full.json; [ $t = flash ] && res=${FLASH_RESULT:-$res}   # FLASH_RESULT: e.g. $OUT/flash-sub.json
    [ -f "$res" ] || continue
    tag=$t-like; [ "$imp" = all ] || tag=$t-like-${imp//,/-}; [ "$lay" = tool ] || tag=$tag-$lay   # FID_LAYOUTS: "tool harness"
    [ "$SECONDS" -lt "${DEADLINE:-100000}" ] || { echo "fidelity-$tag: skipped (deadline)" >> "$OUT/walls.txt"; continue; }
    lim=$(( 120 + ${FID_CALLS:-15} * 8 )); left=$(( ${END:-100000} - SECONDS ))   # END: the call's end (s)
    [ "$left" -lt "$lim" ] && lim=$left
    [ "$lim" -ge 20 ] || { echo "fidelity-$tag: skipped (END)" >> "$OUT/walls.txt"; continue; }
    step fidelity-$tag $lim "$PY" -m tools.lab.cupti_fidelity --task-dir $dir --candidate $dir/baseline.cu \
      --result "$res" --profiler cupti --calls "${FID_CALLS:-15}" --flush-in other --pad harness \
      --placements "${FID_PLACEMENTS:-1}" --layout $lay ${FID_INTERLEAVE:+--interleave} $([ "${FID_REFILL:-1}" = 1 ] && echo --refill) $([ "$imp" = all ] || echo --impls $imp) \
      --memory "${FID_MEMORY:-torch}" --refill-in "${FID_REFILL_IN:-self}" \
      --json "$OUT/fidelity-$tag.json"
  done; done; done ;;
aa)   # identical code in three executors (candidate, twin, incumbent) over AA_RUNS evaluations: the
      # offsets an evaluation's rounds cannot show (tools/lab/aa_spread.py; on the CPU they were
      # the buffers' allocation and the processes' layout, docs/harness-lab.md "Layout")
  step aa-rmsnorm 150 "$PY" -m tools.lab.aa_spread --task-dir $R --scenarios all --runs "${AA_RUNS:-6}" \
    --out "$OUT/aa-rmsnorm"
  step aa-flash-quick 150 "$PY" -m tools.lab.aa_spread --task-dir $F --scenarios quick --runs "${AA_RUNS:-6}" \
    --out "$OUT/aa-flash-quick" ;;
call-cost)   # where a native timed call's host time goes, phase by phase, and what taking CUPTI's records less
      # often saves (tools/lab/call_cost.py), without and with the other process's flush
  step call-cost 90 "$PY" -m tools.lab.call_cost --calls 200 --json "$OUT/call-cost.json"
  step call-cost-other 120 "$PY" -m tools.lab.call_cost --calls 200 --other --json "$OUT/call-cost-other.json" ;;
cupti-step)   # how fine CUPTI's timestamps are by when a process enables it (tools/lab/cupti_step.py)
  step cupti-step 150 "$PY" -m tools.lab.cupti_step --json "$OUT/cupti-step.json" ;;
fidelity-cudnn)   # flash's Sq=1000 over Sk=113 scenarios, 31 calls each: how the peers' calls lie on the GPU
  [ -f "$OUT/flash-full.json" ] || continue
  step fidelity-cudnn 120 "$PY" -m tools.lab.cupti_fidelity --task-dir $F --candidate $F/baseline.cu \
    --result "$OUT/flash-full.json" --profiler cupti --calls 31 --flush-in other --pad harness --scenarios sq1000-sk113 \
    --json "$OUT/fidelity-cudnn.json" ;;
cudnn-modes)   # the cuDNN peer's two modes against the calls' order: flash's Sq=1000 over Sk=113 and
      # Sq=113 d256 scenarios, 64 calls each, taking turns, the inputs in 8 placements, FID_SEEDS' plans
  res=${FLASH_RESULT:-$OUT/flash-full.json}    # FLASH_RESULT: an earlier flash full result (carried)
  [ -f "$res" ] || continue
  for seed in ${FID_SEEDS:-0}; do for imp in ${CUDNN_IMPLS:-all}; do   # CUDNN_IMPLS: "all cudnn,flash" (--impls)
    tag=$seed; [ "$imp" = all ] || tag=$seed-${imp//,/-}
    [ "$SECONDS" -lt "${DEADLINE:-100000}" ] || { echo "cudnn-modes$tag: skipped (deadline)" >> "$OUT/walls.txt"; continue; }
    step cudnn-modes$tag 150 "$PY" -m tools.lab.cupti_fidelity --task-dir $F --candidate $F/baseline.cu \
      --result "$res" --profiler cupti --calls 64 --flush-in other --pad harness --placements 8 \
      --interleave --seed $seed --scenarios "${CUDNN_SCENARIOS:-sq1000-sk113,sq113-sk113-d256}" \
      $([ "$imp" = all ] || echo --impls $imp) --json "$OUT/cudnn-modes$tag.json"
  done; done ;;
cudnn-cond)   # which of the harness's round conditions the cuDNN peer's mode follows: new input values
      # before every call (--refill), the parent's tiny kernel after it (--busy-after), both; the scenarios
      # where the tool's calls were half in the upper mode and the harness's 0-18 % (docs/harness-lab.md)
  res=${FLASH_RESULT:-$OUT/flash-full.json}
  [ -f "$res" ] || continue
  for v in plain refill busy both; do
    [ "$SECONDS" -lt "${DEADLINE:-100000}" ] || { echo "cudnn-cond-$v: skipped (deadline)" >> "$OUT/walls.txt"; continue; }
    o=; case $v in refill) o=--refill;; busy) o=--busy-after;; both) o="--refill --busy-after";; esac
    step cudnn-cond-$v 120 "$PY" -m tools.lab.cupti_fidelity --task-dir $F --candidate $F/baseline.cu \
      --result "$res" --profiler cupti --calls 64 --flush-in other --pad harness --placements 8 --interleave $o \
      --scenarios sq113-sk113-d64-c0,sq113-sk113-d128-c0,sq1000-sk113-d64,sq1000-sk113-d128 --json "$OUT/cudnn-cond-$v.json"
  done ;;
flash-sub)   # flash's full evaluation on FLASH_SUB's scenarios only (sq113-sk113,sq1000-sk113), the peers measured
  step flash-sub 150 "$PY" -m harness eval --task-dir $F --candidate $F/baseline.cu --scenarios "${FLASH_SUB:-sq113-sk113,sq1000-sk113}" \
    --json "$OUT/flash-sub.json" --table --samples --timeout 140 ;;
cudnn-procs)   # the cuDNN peer's upper-mode share per process: flash's FLASH_SUB scenarios evaluated PROCS (3)
      # times with the peers measured afresh (each evaluation its own peers' executor), then the tool on
      # the first one's result; compare_results shares sets every run's shares side by side
  for i in $(seq 1 "${PROCS:-3}"); do
    step flash-sub-p$i 150 "$PY" -m harness eval --task-dir $F --candidate $F/baseline.cu --fresh-peers \
      --scenarios "${FLASH_SUB:-sq113-sk113,sq1000-sk113}" --json "$OUT/flash-sub-p$i.json" --table --samples --timeout 140
  done
  # the tool once per entry of PROCS_TOOL ("IMPLS:LAYOUT[:MEMORY[:REFILL]]", IMPLS "all" or e.g. "cudnn,flash":
  # the peers alone in the tool's process, as in the harness's peers' executor; MEMORY "arena": the slots'
  # buffer exported and mapped as the harness's arena, with LAYOUT harness; REFILL "other": each call's new
  # inputs written by the flushing process into that arena, as the harness's parent writes them), each
  # run a process of its own
  for run in ${PROCS_TOOL:-all:tool cudnn,flash:tool}; do
    IFS=: read -r imp lay mem refill <<< "$run"; mem=${mem:-torch}; refill=${refill:-self}
    tag=${imp//,/-}-$lay; [ "$mem" = torch ] || tag=$tag-$mem; [ "$refill" = self ] || tag=$tag-$refill
    [ -f "$OUT/flash-sub-p1.json" ] && step fidelity-sub-$tag 200 "$PY" -m tools.lab.cupti_fidelity --task-dir $F \
      --candidate $F/baseline.cu --result "$OUT/flash-sub-p1.json" --profiler cupti --calls "${FID_CALLS:-32}" \
      --flush-in other --pad harness --placements "${FID_PLACEMENTS:-32}" --layout $lay --memory $mem --interleave \
      --refill --refill-in $refill $([ "$imp" = all ] || echo --impls $imp) --json "$OUT/fidelity-sub-$tag.json"
  done
  { "$PY" -m tools.lab.compare_results shares "$OUT"/flash-sub-p*.json "$OUT"/fidelity-sub-*.json
    for f in "$OUT"/flash-sub-p*.json; do echo "-- slots, $f"; "$PY" -m tools.lab.compare_results slots "$f"; done
    for f in "$OUT"/flash-sub-p*.json; do echo "-- gaps, $f"; "$PY" -m tools.lab.compare_results gaps "$f"; done
    for f in "$OUT"/flash-sub-p*.json; do for g in "$OUT"/fidelity-sub-*.json; do
      echo "-- fidelity, $f against $g"; "$PY" -m tools.lab.compare_results fidelity "$f" "$g"; done; done
  } > "$OUT/cudnn-procs.txt" 2>&1 ;;
fidelity-pool)   # (after fidelity-like on flash) the tool FID_POOL (3) more times on FID_POOL_SUB's scenarios
      # (sq1000-sk113: cuDNN's kernel mode, its share set per process), each a process of its own, then the
      # harness's flash result against all the tool's processes pooled (compare_results fidelity A T1 T2 ...)
  res=${FLASH_RESULT:-$OUT/flash-full.json}
  [ -f "$res" ] && [ -f "$OUT/fidelity-flash-like.json" ] || continue
  for i in $(seq 1 "${FID_POOL:-3}"); do
    [ "$SECONDS" -lt "${DEADLINE:-100000}" ] || continue
    step fidelity-pool$i 90 "$PY" -m tools.lab.cupti_fidelity --task-dir $F --candidate $F/baseline.cu \
      --result "$res" --profiler cupti --calls "${FID_CALLS:-32}" --flush-in other --pad harness \
      --placements "${FID_PLACEMENTS:-32}" --interleave --refill --seed $((i + 10)) \
      --scenarios "${FID_POOL_SUB:-sq1000-sk113}" --json "$OUT/fidelity-pool$i.json"
  done
  { echo "-- fidelity, $res against the tool's processes pooled"
    "$PY" -m tools.lab.compare_results fidelity "$res" "$OUT/fidelity-flash-like.json" "$OUT"/fidelity-pool*.json
    echo "-- shares of the work's modes, the tool's processes"
    "$PY" -m tools.lab.compare_results shares-work "$res" "$OUT/fidelity-flash-like.json" "$OUT"/fidelity-pool*.json
  } > "$OUT/fidelity-pool.txt" 2>&1 ;;
kmode-procs)   # cuDNN's kernel mode on KMODE_SUB's scenarios (sq1000-sk113) across processes: the harness
      # KMODE_PROCS (3) times with the peers measured afresh, the tool KMODE_TOOL (4) times, each a process of
      # its own; compare_results shares sets every process's share side by side (run it last: it re-keeps the peers)
  sub=${KMODE_SUB:-sq1000-sk113}
  for i in $(seq 1 "${KMODE_PROCS:-3}"); do
    [ "$SECONDS" -lt "${DEADLINE:-100000}" ] || continue
    step kmode-h$i 90 "$PY" -m harness eval --task-dir $F --candidate $F/baseline.cu --fresh-peers ${EVAL_ARGS:-} \
      --scenarios "$sub" --json "$OUT/kmode-h$i.json" --samples --timeout 85
  done
  for i in $(seq 1 "${KMODE_TOOL:-4}"); do
    [ "$SECONDS" -lt "${DEADLINE:-100000}" ] && [ -f "$OUT/kmode-h1.json" ] || continue
    step kmode-t$i 90 "$PY" -m tools.lab.cupti_fidelity --task-dir $F --candidate $F/baseline.cu \
      --result "$OUT/kmode-h1.json" --profiler cupti --calls 32 --flush-in other --pad harness --placements 32 \
      --interleave --refill --seed $i --scenarios "$sub" --json "$OUT/kmode-t$i.json"
  done
  { echo "-- shares of the work's modes (the kernels')"
    "$PY" -m tools.lab.compare_results shares-work "$OUT"/kmode-h*.json "$OUT"/kmode-t*.json
    echo "-- shares of the spans' modes"
    "$PY" -m tools.lab.compare_results shares "$OUT"/kmode-h*.json "$OUT"/kmode-t*.json
    for g in "$OUT"/kmode-t*.json; do echo "-- fidelity, kmode-h1 against $g"
      "$PY" -m tools.lab.compare_results fidelity "$OUT/kmode-h1.json" "$g"; done; } > "$OUT/kmode-procs.txt" 2>&1 ;;
rms-kept2)   # rmsnorm's evaluation with the peers kept once more (after `rms`): two evaluations as every
      # one after a host's first runs, to set against each other
      # (RMS_KEPT_RUNS, default 1, more of them: every pair set against each other)
  runs=${RMS_KEPT_RUNS:-1}; names=rmsnorm-full-kept
  for i in $(seq 2 $((runs + 1))); do
    rms_eval rmsnorm-full-kept$i
    names="$names rmsnorm-full-kept$i"
  done
  for a in $names; do for b in $names; do [[ "$a" < "$b" ]] || continue
    echo "-- repeat $a $b"; "$PY" -m tools.lab.compare_results repeat "$OUT/$a.json" "$OUT/$b.json"
  done; done > "$OUT/rms-kept2.txt" 2>&1 ;;
flash-kept2)   # flash's evaluation with the peers kept once more (after flash-kept): two evaluations as every
      # one after a host's first runs, set against each other (and against the full one)
  flash_eval flash-full-kept2
  { for b in flash-full flash-full-kept; do echo "-- repeat $b flash-full-kept2"
      "$PY" -m tools.lab.compare_results repeat "$OUT/$b.json" "$OUT/flash-full-kept2.json"; done
    echo "-- repeat flash-full flash-full-kept"
    "$PY" -m tools.lab.compare_results repeat "$OUT/flash-full.json" "$OUT/flash-full-kept.json"; } > "$OUT/flash-kept2.txt" 2>&1 ;;
rms-rev)   # rmsnorm with its scenarios in reverse order, the peers measured: is r1-c1024's torch_rms_norm
      # reading 7-15 % over CUPTI (the fifth session) the first scenario's, or that scenario's?
  rm -rf /tmp/rms-rev && mkdir -p /tmp/rms-rev && cp -r $R /tmp/rms-rev/rmsnorm &&
    "$PY" - /tmp/rms-rev/rmsnorm/task.yaml <<'PYEOF'
import sys, yaml
p = sys.argv[1]
doc = yaml.safe_load(open(p))
sc = doc["scenarios"]
ids = [dict(rows=r, cols=c) for b in sc["grid"] for r in b["rows"] for c in b["cols"]] + sc["list"]
sc["list"] = ids[::-1]
del sc["grid"]
yaml.safe_dump(doc, open(p, "w"), sort_keys=False)
PYEOF
  step rmsnorm-rev 120 "$PY" -m harness eval --task-dir /tmp/rms-rev/rmsnorm --candidate $R/baseline.cu --fresh-peers \
    --json "$OUT/rmsnorm-rev.json" --table --samples --timeout 110 ;;
first-touch)   # the first scenario timed, on a harness that uses every arena page once first (executor.py,
      # cmd_cuda) and on OLD_HARNESS's (a folder holding an earlier `harness`, e.g. .carry/old): rmsnorm
      # at 2 s a scenario (two passes of the slots' deck) on r1-c1024 (first), r1-c2048, r128-c1024
  rm -rf /tmp/rms2 && mkdir -p /tmp/rms2 && cp -r $R /tmp/rms2/rmsnorm &&
    sed -i "s/max_seconds: [0-9.]*/max_seconds: 2.0/" /tmp/rms2/rmsnorm/task.yaml
  root=$PWD
  for v in new old; do
    [ $v = old ] && [ ! -d "${OLD_HARNESS:-.carry/old}/harness" ] && continue
    for k in 1 2; do
      ( [ $v = old ] && cd "${OLD_HARNESS:-.carry/old}"; step touch-$v-$k 90 "$PY" -m harness eval --task-dir /tmp/rms2/rmsnorm \
        --candidate "$root/$R/baseline.cu" --scenarios r1-c1024,r1-c2048,r128-c1024 --json "$OUT/touch-$v-$k.json" \
        --table --samples --timeout 85 )
    done
  done ;;
rms-cap)   # rmsnorm's full evaluation twice (peers measured, then kept) with its time cap at RMS_CAP s
  [ "$SECONDS" -lt "${DEADLINE:-100000}" ] || { echo "rms-cap: skipped (deadline)" >> "$OUT/walls.txt"; continue; }
  rm -rf /tmp/rms-cap && mkdir -p /tmp/rms-cap && cp -r $R /tmp/rms-cap/rmsnorm &&   # the folder is the task's name
    sed -i "s/max_seconds: [0-9.]*/max_seconds: ${RMS_CAP:-1.0}/" /tmp/rms-cap/rmsnorm/task.yaml
  for v in full kept; do
    step rmsnorm-cap-$v 120 "$PY" -m harness eval --task-dir /tmp/rms-cap/rmsnorm --candidate $R/baseline.cu \
      --json "$OUT/rmsnorm-cap-$v.json" --table --samples --timeout 110
  done
  "$PY" -m tools.lab.compare_results repeat "$OUT/rmsnorm-cap-full.json" "$OUT/rmsnorm-cap-kept.json" > "$OUT/rms-cap.txt" 2>&1 ;;
aa-rms)   # rmsnorm's part of `aa` alone
  [ "$SECONDS" -lt "${DEADLINE:-100000}" ] || { echo "aa-rms: skipped (deadline)" >> "$OUT/walls.txt"; continue; }
  step $s 150 "$PY" -m tools.lab.aa_spread --task-dir $R --scenarios all --runs "${AA_RUNS:-6}" --out "$OUT/$s" ;;
quick)   # flash_attn_fwd's quick set
  step flash-quick 90 "$PY" -m harness eval --task-dir $F --candidate $F/baseline.cu --scenarios quick \
    --json "$OUT/flash-quick.json" --timeout 80 ;;
keep)   # flash_attn_fwd's quick set twice: the second takes the peers' figures the first kept
  for i in 1 2; do
    step flash-quick-keep$i 90 "$PY" -m harness eval --task-dir $F --candidate $F/baseline.cu --scenarios quick \
      --json "$OUT/flash-quick-keep$i.json" --timeout 80
  done
  "$PY" - "$OUT" > "$OUT/keep.txt" 2>&1 <<'PYEOF'
import json, sys
a, b = (json.load(open(f"{sys.argv[1]}/flash-quick-keep{i}.json")) for i in (1, 2))
for r in (a, b):
    print(r["status"], r["summary"]["seconds"], r["time_spent"], r["summary"]["speedup_vs_peer_geomean"],
          [s["timing"].get("peers") for s in r["scenarios"]])
for x, y in zip(a["scenarios"], b["scenarios"]):
    print(x["id"], {p: (round(x["peer_ms"].get(p, 0), 4), round(y["peer_ms"].get(p, 0), 4)) for p in x.get("peer_ms", {})},
          round(x.get("speedup_vs_baseline") or 0, 3), round(y.get("speedup_vs_baseline") or 0, 3))
PYEOF
  cat "$OUT/keep.txt" ;;
adversarial-timing)   # the CUDA candidates that attack the timed calls: the pad's shadow, timed-only behaviour
  for only in trust8 hack11 hack03; do
    [ "$SECONDS" -lt "${DEADLINE:-100000}" ] || { echo "adversarial-$only: skipped (deadline)" >> "$OUT/walls.txt"; continue; }
    step adversarial-$only 120 "$PY" -m harness.adversarial.run harness/adversarial/cuda/manifest.yaml --only $only \
      --json "$OUT/adversarial-$only.json"
  done ;;
adversarial)   # every CUDA adversarial candidate, and their outcome table
  step adversarial 200 "$PY" -m harness.adversarial.run harness/adversarial/cuda/manifest.yaml --json "$OUT/adversarial.json"
  "$PY" -m tools.lab.compare_results adversarial "$OUT/adversarial.json" > "$OUT/adversarial.txt" 2>&1 ;;
pytest)   # harness/tests/test_cuda.py and the driver's and NVML's tests, less the run-time candidates (pytest-runtime)
  [ "$SECONDS" -lt "${DEADLINE:-100000}" ] || { echo "pytest-cuda: skipped (deadline)" >> "$OUT/walls.txt"; continue; }
  step pytest-cuda 200 "$PY" -m pytest -q harness/tests/test_cuda.py harness/tests/test_cuda_driver.py harness/tests/test_nvml.py \
    -k "not caught_at_run_time" ;;
pytest-lanes)   # the peers timed in two processes at once (harness/executor/lanes.py), on cuDNN's kernel-mode scenario
  step pytest-lanes 150 "$PY" -m pytest -q harness/tests/test_cuda.py -k two_processes ;;
pytest-tools)   # the tools' GPU tests (the fidelity tool's arena and its other process)
  step pytest-tools 120 "$PY" -m pytest -q harness/tests/test_cupti_fidelity.py harness/tests/test_estimators.py ;;
pytest-runtime)   # the CUDA candidates caught at run time (hack11 and the rest of the CUDA manifest's)
  [ "$SECONDS" -lt "${DEADLINE:-100000}" ] || { echo "pytest-runtime: skipped (deadline)" >> "$OUT/walls.txt"; continue; }
  step pytest-runtime 300 "$PY" -m pytest -q harness/tests/test_cuda.py -k caught_at_run_time ;;
fidelity)   # the harness's per-scenario times against CUPTI's for the same kernels and shapes, after `full`
  for t in rmsnorm flash; do
    dir=$R; [ $t = flash ] && dir=$F
    [ -f "$OUT/$t-full.json" ] || continue
    step fidelity-$t 150 "$PY" -m tools.lab.cupti_fidelity --task-dir $dir --candidate $dir/baseline.cu \
      --result "$OUT/$t-full.json" --json "$OUT/fidelity-$t.json"
  done ;;
esac; done
"$PY" - "$OUT" > "$OUT/summary.txt" 2>&1 <<'PYEOF'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
for p in sorted(out.glob("*.json")):
    if p.name.startswith(("fidelity", "adversarial", "cupti-step", "cudnn-", "call-cost", "kmode-t")) or p.name.endswith("-prof.json"):
        continue
    r = json.loads(p.read_text())
    if not isinstance(r, dict) or "summary" not in r:    # a tool's output (refcost-*), not a result
        continue
    s = r["summary"]
    print(f"== {p.stem}: {r['status']}, {s.get('seconds')} s, x_base {s.get('speedup_vs_baseline_geomean')} "
          f"{s.get('speedup_vs_baseline_ci')}, x_peer {s.get('speedup_vs_peer_geomean')}")
    print("  time_spent:", r.get("time_spent"))
    for m in r["messages"][:5]:
        print("  message:", m[:300])
    st = {}
    for sc in r["scenarios"]:
        st[sc["status"]] = st.get(sc["status"], 0) + 1
    print("  statuses:", st)
    print("  timing_clock:", (r.get("device_info") or {}).get("timing_clock"))
    print("  rechecks: calls", sum(len(sc.get("rechecked_calls") or []) for sc in r["scenarios"]),
          "screened", sum(sc.get("rechecks_screened") or 0 for sc in r["scenarios"]))
    cl, gaps = {}, []
    for sc in r["scenarios"]:
        t = sc.get("timing") or {}
        cl[t.get("clock")] = cl.get(t.get("clock"), 0) + 1
        gaps += [round(v * 1e3, 2) for v in (t.get("gap_ms") or {}).values()]
    print("  clocks per scenario:", cl, "gap us min/median/max:", (min(gaps), sorted(gaps)[len(gaps) // 2], max(gaps)) if gaps else None)
    firsts = [sc["id"] for sc in r["scenarios"] if (sc.get("timing") or {}).get("first_loop")]
    print("  bounds re-measured:", len(firsts), firsts[:5])
    clk = [(sc.get("timing") or {}).get("clocks") for sc in r["scenarios"] if (sc.get("timing") or {}).get("clocks")]
    if clk:
        print("  clocks: sm_mhz", min(c["sm_mhz_min"] or 0 for c in clk), "-", max(c["sm_mhz_max"] or 0 for c in clk),
              "temp max", max(c["temp_c_max"] or 0 for c in clk), "power max", max(c["power_w_max"] or 0 for c in clk),
              "reasons", sorted({x for c in clk for x in c["reasons"]}), "dropped rounds", sum(c["dropped_rounds"] for c in clk))
PYEOF
cat "$OUT/cupti-self.log" "$OUT/rms-cap.txt" "$OUT/rms-kept2.txt" "$OUT/flash-kept2.txt" "$OUT/cudnn-procs.txt" "$OUT/kmode-procs.txt" "$OUT/fidelity-pool.txt" "$OUT/call-cost.log" "$OUT/call-cost-other.log" >> "$OUT/summary.txt" 2>/dev/null
{ for f in "$OUT"/fidelity-*.log "$OUT"/cond-*.log "$OUT"/cudnn-modes*.log; do [ -f "$f" ] && echo "-- $f" && grep -A6 "^harness / CUPTI, against the \(work\|span\)" "$f"; done
  tail -n 3 "$OUT/adversarial.txt" "$OUT/pytest-cuda.log" "$OUT/pytest-runtime.log" "$OUT/pytest-tools.log" \
    "$OUT/pytest-lanes.log" 2>/dev/null
  for t in rmsnorm flash; do for f in "$OUT"/fidelity-$t-like*.json; do [ -f "$f" ] && echo "-- fidelity by estimator, $f" &&
    "$PY" -m tools.lab.compare_results fidelity "$OUT/$t-full.json" "$f"; done; done
  for f in "$OUT"/cudnn-modes*.json "$OUT"/cudnn-cond-*.json "$OUT"/fidelity-*.json; do [ -f "$f" ] && echo "-- modes, $f" &&
    "$PY" -m tools.lab.compare_results modes "$f" | head -60; done
  for t in rmsnorm flash; do [ -f "$OUT/$t-full.json" ] && echo "-- the peers' processes apart, $t" &&
    "$PY" -m tools.lab.compare_results lanes "$OUT/$t-full.json"; done
  for t in rmsnorm flash; do [ -f "$OUT/$t-full-kept.json" ] && echo "-- repeat by estimator, $t" &&
    "$PY" -m tools.lab.compare_results estimators "$OUT/$t-full.json" "$OUT/$t-full-kept.json"; done
  for f in "$OUT"/adversarial-*.log; do [ -f "$f" ] && echo "-- $f" && tail -n 12 "$f"; done; } >> "$OUT/summary.txt"
cat "$OUT/walls.txt" "$OUT/summary.txt"
head -c 4000 "$OUT/flash-quick-prof.txt" 2>/dev/null
head -c 6000 "$OUT/flash-full-kept-prof.txt" 2>/dev/null
cd "$OUT" && tar czf /tmp/ks-all.tgz --exclude=summary.txt --exclude=walls.txt --exclude='*.prof' . && mv /tmp/ks-all.tgz all.tgz && \
  find . -maxdepth 1 -type f ! -name all.tgz ! -name summary.txt ! -name walls.txt -delete
exit 0
