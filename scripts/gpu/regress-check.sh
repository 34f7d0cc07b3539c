#!/usr/bin/env bash
# Where a CUDA evaluation with the peers kept spends its time since issue 39, and whether rmsnorm's
# first evaluation fits an H100's memory (the run of 2026-12-06 at a2764bf: flash-kept had not used
# kept figures, rmsnorm-kept ran out of memory). One H100 or H200 (device tool), from the repository
# root, with .carry/host/debs (bubblewrap's .deb) carried; about 140 s:
#   KS_COMMIT=<this tree's commit> OUT=/tmp/out bash scripts/gpu/regress-check.sh
# STEPS (default: all, in this order; each time-boxed, skipped when less than its estimate is left
# before DEADLINE, default 130 s from the start, so that the call ends within 150 s):
#   noise      twin executors' lean requests on the parent's clock (tools/lab/bound_noise.py, 128 pairs):
#              the noise the bound requests' interval has to get under their margin       (~10 s)
#   rms-big    rmsnorm's 4 largest scenarios as a host's first evaluation (the peers measured in two
#              processes, --fresh-peers), GPU memory sampled by nvidia-smi every 0.2 s: the memory plan
#              (device_info.memory) and no out-of-memory                                   (~30 s)
#   flash-sub  flash's evaluation on every 5th scenario (40), the peers measured in one process (their
#              figures kept for the steps after it)                                         (~30 s)
#   flash-prof the same with the peers kept, under cProfile (cumulative and own time in flash-prof.txt)
#   layers     the same kept evaluation four times in one process: as it is, without the bound
#              requests, without the parent's persisting-L2 guard, without both (Options.bound,
#              Options.parent_l2, as harness/adversarial/run.py's `without:`)                (~45 s)
#   rms-kept   rmsnorm's full evaluation, the peers measured in one process, then kept (budget 15 s)
# In $OUT: summary.txt (last), walls.txt, each step's log and JSON, regress.tgz.
set -u
: "${OUT:?set OUT}"
. "$(dirname "$0")/lib.sh"
STEPS=${STEPS:-noise rms-big flash-sub flash-prof layers rms-kept}
DEADLINE=${DEADLINE:-130}
SUB=$("$PY" -m harness scenarios --task-dir $F | awk 'NR % 5 == 1' | paste -sd, -)
BIG=r65536-c16384,r65536-c8192,r65535-c4097,r4096-c16384

fits() {   # fits NAME ESTIMATE: whether ESTIMATE seconds are left before DEADLINE (else noted as skipped)
  if [ $((SECONDS + $2)) -le "$DEADLINE" ]; then return 0; fi
  echo "$1: skipped (about $2 s needed, $((DEADLINE - SECONDS)) s left before DEADLINE=$DEADLINE)" | tee -a "$OUT/walls.txt"
  return 1
}
ev() {   # ev NAME TIMEOUT TASKDIR [ARGS...]: the task's baseline evaluated as the candidate
  local name=$1 t=$2 dir=$3; shift 3
  step "$name" $((t + 10)) "$PY" -m harness eval --task-dir "$dir" --candidate "$dir/baseline.cu" \
    --json "$OUT/$name.json" --timeout "$t" "$@"
}

for s in $STEPS; do case $s in
noise)
  fits noise 10 && step noise 40 "$PY" -m tools.lab.bound_noise --pairs 128 --json "$OUT/noise.json" ;;
rms-big)
  if fits rms-big 30; then
    nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader,nounits -lms 200 > "$OUT/rms-big-mem.csv" 2>&1 &
    SMI=$!
    ev rms-big 60 $R --scenarios $BIG --fresh-peers
    kill "$SMI" 2>/dev/null; wait "$SMI" 2>/dev/null
  fi ;;
flash-sub)
  fits flash-sub 30 && ev flash-sub 80 $F --scenarios "$SUB" --peers-together --peer-processes 1 ;;
flash-prof)
  if fits flash-prof 15; then
    step flash-prof 60 "$PY" -m cProfile -o "$OUT/flash-prof.prof" -m harness eval --task-dir $F \
      --candidate $F/baseline.cu --scenarios "$SUB" --peer-processes 1 --json "$OUT/flash-prof.json" --timeout 50
    "$PY" -c "import pstats; p = pstats.Stats('$OUT/flash-prof.prof'); p.sort_stats('cumulative').print_stats(60); p.sort_stats('tottime').print_stats(30)" \
      > "$OUT/flash-prof.txt" 2>&1
  fi ;;
layers)
  fits layers 45 && step layers 90 "$PY" - "$OUT" "$SUB" <<'PYEOF'
import json, sys
from pathlib import Path
from harness.evaluate import evaluate
from harness.options import Options
out, sub = Path(sys.argv[1]), sys.argv[2]
for label, off in (("as-is", {}), ("no-bound", {"bound": False}), ("no-guard", {"parent_l2": False}),
                   ("neither", {"bound": False, "parent_l2": False})):
    r = evaluate(Options(task_dir="kernels/flash_attn_fwd", candidate="kernels/flash_attn_fwd/baseline.cu",
                         scenarios=sub, peer_processes=1, timeout=60, **off))
    (out / f"layers-{label}.json").write_text(json.dumps(r, default=str))
    print(label, r["status"], r["summary"].get("seconds"), r.get("time_spent"), flush=True)
PYEOF
  ;;
rms-kept)
  fits rms-kept 40 && ev rms-full 60 $R --peers-together --peer-processes 1 && ev rms-kept 40 $R --peer-processes 1 ;;
*)
  echo "unknown step $s" | tee -a "$OUT/walls.txt" ;;
esac; done

"$PY" - "$OUT" > "$OUT/summary.txt" 2>&1 <<'PYEOF'
import json, sys
from pathlib import Path
W = Path(sys.argv[1])
print("== regress-check", (W / "env.txt").read_text().splitlines()[2:4] if (W / "env.txt").exists() else "")
noise = W / "noise.json"
if noise.exists():
    n = json.loads(noise.read_text())
    print("-- lean-request noise (twin executors, paired): " + "; ".join(
        f"{k}: d {v['d_median_ms'] * 1e3:+.2f} us, mad {v['d_mad_ms'] * 1e3:.2f} us, ci "
        f"{[round(c * 1e3, 2) for c in (v.get('ci256_ms') or v.get('ci128_ms') or [])]}" for k, v in n.items()))
mem = W / "rms-big-mem.csv"
if mem.exists():
    used = [int(l.split(",")[0]) for l in mem.read_text().splitlines() if l.split(",")[0].strip().isdigit()]
    total = next((l.split(",")[1].strip() for l in mem.read_text().splitlines() if "," in l), "?")
    print(f"-- rms-big GPU memory (nvidia-smi, MiB): max used {max(used) if used else None} of {total}")
for path in sorted(W.glob("*.json")):
    if path.name in ("noise.json",):
        continue
    try:
        r = json.loads(path.read_text())
    except ValueError:
        continue
    if not isinstance(r, dict) or "scenarios" not in r:
        continue
    sc = [s for s in r["scenarios"] if (s.get("stage_seconds") or {}).get("timing") is not None]
    stage = sum(s["stage_seconds"]["timing"] for s in sc)
    loop = sum((s.get("timing") or {}).get("seconds", 0) for s in sc)
    bound = sum(((s.get("timing") or {}).get("bound") or {}).get("seconds", 0) for s in sc)
    stopped, peers = {}, {}
    for s in sc:
        b = (s.get("timing") or {}).get("bound") or {}
        stopped[b.get("stopped", b.get("skipped", "-"))] = stopped.get(b.get("stopped", b.get("skipped", "-")), 0) + 1
        how = (s.get("timing") or {}).get("peers") or "-"
        peers[how] = peers.get(how, 0) + 1
    ts, summ = r.get("time_spent") or {}, r.get("summary") or {}
    print(f"-- {path.stem}: {r['status']}, {summ.get('seconds')} s (start {ts.get('start')}, correctness "
          f"{ts.get('correctness')}, timing {ts.get('timing')}); timed {len(sc)}: loop {loop:.1f} s, bound {bound:.1f} s "
          f"(stopped {stopped}), else {stage - loop - bound:.1f} s ({(stage - loop - bound) / max(1, len(sc)) * 1e3:.0f} ms "
          f"a scenario); peers {peers}; x_base {summ.get('speedup_vs_baseline_geomean')} "
          f"{summ.get('speedup_vs_baseline_ci')} {summ.get('verdict_vs_baseline')}")
    info = r.get("device_info") or {}
    if info.get("memory"):
        print(f"   memory {info['memory']}")
    for m in r.get("messages", []):
        if "memory" in m or "timeout" in m or "error" in m:
            print("   message:", m[:300])
for name in ("flash-prof.txt",):
    p = W / name
    if p.exists():
        lines = [l for l in p.read_text().splitlines() if "harness/" in l or "tools/" in l or "ncalls" in l]
        print(f"-- {name} (harness lines, cumulative then own time):")
        print("\n".join(lines[:45]))
print("-- steps:")
print((W / "walls.txt").read_text() if (W / "walls.txt").exists() else "(none)")
for log in ("rms-big.log", "rms-kept.log", "layers.log"):
    p = W / log
    if p.exists() and "Traceback" in p.read_text():
        print(f"-- {log} has a traceback:\n" + "\n".join(p.read_text().splitlines()[-12:]))
PYEOF
(cd "$OUT" && tar czf /tmp/regress.tgz --exclude=regress.tgz . && mv /tmp/regress.tgz "$OUT/")
cat "$OUT/summary.txt"
exit 0
