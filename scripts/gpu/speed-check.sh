#!/usr/bin/env bash
# A full evaluation's speed on one GPU host (issue 45): the reference cache (harness/task/refcache.py)
# and the rounds' early stop (harness/timing/rounds.py). From the repository root, with
# .carry/host/debs (bubblewrap's .deb) carried:
#   KS_COMMIT=<this tree's commit> OUT=/tmp/out bash scripts/gpu/speed-check.sh                  # ~5-9 min
#   KS_COMMIT=<this tree's commit> OUT=/tmp/out STEPS="rms early" bash scripts/gpu/speed-check.sh  # ~5-9 min
# A flash evaluation took 40-45 s on the H200 (issue 45) and 87 s on the H100 at a2764bf: the times
# below are the first; each step's limit allows the second. STEPS (default "refcost flash"), in order:
#   refcost  per flash scenario, one seed: the reference and lowp computed, then the reference kept in a
#            cache and loaded back, verified, onto the GPU (tools/lab/reference_cost.py --cache): which
#            scenarios load faster than they compute, and every load bit for bit the reference. ~60-90 s.
#   flash    flash_attn_fwd's full evaluation of its baseline twice without the cache (the first keeps the
#            peers' figures if this host has none: +70 s), then three times with a fresh cache and one
#            pooled seed (the first computes and stores, the next two load). ~5 x 40-45 s.
#   rms      the same for rmsnorm, two runs each. ~4 x 13 s.
#   early    flash's full evaluation (peers kept) twice with the early stop and twice with --full-rounds,
#            alternately, then rmsnorm's the same: repeatability of each pair (compare_results repeat:
#            the claim is median <= 0.5 %, max <= 2 % with the early stop as without), their rounds and
#            seconds, the baseline against itself `same` in all. ~4 x 45 s + 4 x 13 s.
# $OUT/summary.txt (walls, refcache, early) and speed.tgz (everything). refcache.txt: per run its seconds, correctness stage, references, timing and the cache's counts,
# and whether the cached runs' correctness fields (seeds, errors, tolerances) are identical.
# Expected (the claim to check): the cached runs' `correctness_reference` well under the uncached ones'
# (flash 9.9 s on the H200 before), the same status, `same` verdicts, identical correctness fields.
set -u
: "${OUT:?set OUT}"
PACK=speed      # everything in $OUT/speed.tgz, packed after every step (lib.sh)
. "$(dirname "$0")/lib.sh"
STEPS=${STEPS:-refcost flash}
CACHE=$KERNELSEEK_DATA_DIR/compile-cache/reference-cache
ev() {   # ev TASKDIR NAME TIMEOUT ARGS...: the baseline's full evaluation, $OUT/NAME.json
  local dir=$1 name=$2 t=$3; shift 3
  step "$name" $((t + 12)) "$PY" -m harness eval --task-dir "$dir" --candidate "$dir/baseline.cu" \
    --json "$OUT/$name.json" --timeout "$t" "$@"
}
for s in $STEPS; do case $s in
refcost)
  rm -rf /tmp/ks-refcost
  step refcost-cache 300 "$PY" -m tools.lab.reference_cost --task-dir $F --scenarios all --cache /tmp/ks-refcost \
    --json "$OUT/refcost-cache.json"
  rm -rf /tmp/ks-refcost ;;
flash)
  ev $F flash-nocache1 200 --reference-cache-gb 0
  ev $F flash-nocache2 200 --reference-cache-gb 0
  rm -rf "$CACHE"
  for i in 1 2 3; do ev $F flash-cache$i 200 --seed-pool 1; done ;;
rms)
  ev $R rms-nocache1 70 --reference-cache-gb 0
  ev $R rms-nocache2 70 --reference-cache-gb 0
  rm -rf "$CACHE"
  for i in 1 2; do ev $R rms-cache$i 70 --seed-pool 1; done ;;
early)
  for t in flash rms; do
    dir=$F lim=200; [ $t = rms ] && dir=$R lim=70
    # the peers' figures kept first, if this host has none yet (that evaluation measures them: not compared)
    [ -n "$(ls -A "$KERNELSEEK_DATA_DIR/compile-cache/peer-figures" 2>/dev/null)" ] || ev $dir $t-warm $lim
    for i in 1 2; do
      ev $dir $t-early$i $lim
      ev $dir $t-full$i $lim --full-rounds
    done
    { for k in early full; do echo "-- $t, $k: repeatability"; "$PY" -m tools.lab.compare_results repeat "$OUT/$t-${k}1.json" "$OUT/$t-${k}2.json"; done
      echo "-- $t, early against full"; "$PY" -m tools.lab.compare_results repeat "$OUT/$t-early1.json" "$OUT/$t-full1.json"
      "$PY" - "$OUT" $t <<'PYEOF'
import collections, json, os, sys
out, t = sys.argv[1], sys.argv[2]
for k in ("early1", "early2", "full1", "full2"):
    path = os.path.join(out, f"{t}-{k}.json")
    if not os.path.exists(path):
        continue
    r = json.load(open(path))
    sc = [s for s in r["scenarios"] if s.get("timing")]
    reps = collections.Counter(s["timing"]["reps"] for s in sc)
    verdicts = collections.Counter(s.get("verdict_vs_baseline") for s in sc)
    print(f"{t}-{k}: {r['status']} seconds {r['summary']['seconds']} timing {r['time_spent'].get('timing')} rounds "
          f"{sum(s['timing']['reps'] for s in sc)} reps {sorted(reps.items())[:8]} x_base "
          f"{r['summary'].get('speedup_vs_baseline_geomean')} {r['summary'].get('verdict_vs_baseline')} per scenario {dict(verdicts)}")
PYEOF
    } > "$OUT/early-$t.txt" 2>&1
  done ;;
esac; pack; done
"$PY" - "$OUT" > "$OUT/refcache.txt" 2>&1 <<'PYEOF'
import glob, json, os, sys
out = sys.argv[1]
def load(name):
    path = os.path.join(out, name + ".json")
    return json.load(open(path)) if os.path.exists(path) else None
for task in ("flash", "rms"):
    names = [f"{task}-nocache1", f"{task}-nocache2"] + [f"{task}-cache{i}" for i in (1, 2, 3)]
    runs = {n: load(n) for n in names}
    for n, r in runs.items():
        if r is None:
            continue
        ts, sm = r.get("time_spent", {}), r["summary"]
        print(f"{n:16} {r['status']:8} seconds {sm['seconds']:7.2f} correctness {ts.get('correctness', 0):6.2f} "
              f"reference {ts.get('correctness_reference', 0):6.2f} calls {ts.get('correctness_calls', 0):5.2f} "
              f"timing {ts.get('timing', 0):6.2f} x_base {sm.get('speedup_vs_baseline_geomean')} "
              f"{sm.get('verdict_vs_baseline')} cache {r.get('reference_cache')}")
    fields = ("status", "seeds", "max_abs_err", "tolerance", "lowp_err", "checks", "nondeterministic")
    cached = [(n, r) for n, r in runs.items() if n.startswith(f"{task}-cache") and r is not None]
    if len(cached) > 1:
        first = [{k: s.get(k) for k in fields} for s in cached[0][1]["scenarios"]]
        for n, r in cached[1:]:
            other = [{k: s.get(k) for k in fields} for s in r["scenarios"]]
            diff = [(a, b) for a, b in zip(first, other) if a != b]
            print(f"{task}: {n} against {cached[0][0]}: correctness fields "
                  f"{'identical' if not diff and len(first) == len(other) else f'differ in {len(diff)} scenarios, first {diff[:1]}'}")
    print("messages (cache):", sorted({m for r in runs.values() if r for m in r["messages"] if "reference cache" in m}))
PYEOF
grep -h "^cache:\|^totals" "$OUT/refcost-cache.log" >> "$OUT/refcache.txt" 2>/dev/null
cat "$OUT/walls.txt" "$OUT/refcache.txt" "$OUT"/early-*.txt > "$OUT/summary.txt" 2>/dev/null
cat "$OUT/summary.txt"
exit 0
