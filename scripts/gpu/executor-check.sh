#!/usr/bin/env bash
# The CUDA executor on one H200 (device tool, `nvidia-h200`), from the repository root, with
# .carry/host/debs (bubblewrap's .deb: `apt-get download bubblewrap` there) carried. One call:
#   OUT=/tmp/out bash scripts/gpu/executor-check.sh            (PART=1, about 160 s)
# 1. rmsnorm's baseline as the candidate on its quick set, with peers (the executor path end to end;
#    when it fails, once more with the seccomp filter off, to tell the filter from the rest);
#    every CUDA adversarial candidate (harness/adversarial/cuda/manifest.yaml); flash_attn_fwd's
#    baseline on its quick set, with both peers.
#   OUT=/tmp/out PART=3 bash scripts/gpu/executor-check.sh     (about 500 s)
# 3. issue 13's acceptance: flash_attn_fwd's full evaluation of the baseline with both peers (within
#    FLASH_TIMEOUT, default 203 s), the same twice without peers (repeatability:
#    compare_results repeat), then every CUDA adversarial candidate in the time left.
#   OUT=/tmp/out PART=2 bash scripts/gpu/executor-check.sh     (about 280 s)
# 2. the adversarial entries named in ONLY (default: hack13 and trust8), rmsnorm's and flash_attn_fwd's
#    full evaluations of the baseline with peers (flash within FLASH_TIMEOUT, default 180 s).
# Results (JSON, logs, a summary) land in $OUT as each step ends.
set -u
: "${OUT:?set OUT}"
. "$(dirname "$0")/lib.sh"
PART=${PART:-1}
T0=$(date +%s)
left() { echo $(( ${BUDGET:-585} - ($(date +%s) - T0) )); }
if [ "$PART" = 3 ]; then
  T=${FLASH_TIMEOUT:-203}
  step flash-full $((T + 15)) "$PY" -m harness eval --task-dir $F --candidate $F/baseline.cu \
    --json "$OUT/flash-full.json" --table --timeout "$T"
  for run in a b; do
    step flash-repeat-$run 170 "$PY" -m harness eval --task-dir $F --candidate $F/baseline.cu --no-peers \
      --json "$OUT/flash-repeat-$run.json" --timeout 160
  done
  "$PY" -m tools.lab.compare_results repeat "$OUT/flash-repeat-a.json" "$OUT/flash-repeat-b.json" \
    > "$OUT/repeat.txt" 2>&1
  cat "$OUT/repeat.txt"
  if [ "$(left)" -gt 60 ]; then
    step adversarial "$(left)" "$PY" -m harness.adversarial.run harness/adversarial/cuda/manifest.yaml \
      --json "$OUT/adversarial.json"
    "$PY" -m tools.lab.compare_results adversarial "$OUT/adversarial.json" > "$OUT/adversarial.txt" 2>&1
  fi
  NAMES="flash-full flash-repeat-a flash-repeat-b"
elif [ "$PART" = 2 ]; then
  for only in ${ONLY:-hack13 trust8}; do
    step "adversarial-$only" 60 "$PY" -m harness.adversarial.run harness/adversarial/cuda/manifest.yaml --only "$only" \
      --json "$OUT/adversarial-$only.json"
    "$PY" -m tools.lab.compare_results adversarial "$OUT/adversarial-$only.json" >> "$OUT/adversarial.txt" 2>&1
  done
  step rmsnorm-full 70 "$PY" -m harness eval --task-dir $R --candidate $R/baseline.cu \
    --json "$OUT/rmsnorm-full.json" --table --timeout 65
  T=${FLASH_TIMEOUT:-180}
  step flash-full $((T + 15)) "$PY" -m harness eval --task-dir $F --candidate $F/baseline.cu \
    --json "$OUT/flash-full.json" --table --timeout "$T"
  NAMES="rmsnorm-full flash-full"
else
NAMES="rmsnorm-quick flash-quick"
step rmsnorm-quick 75 "$PY" -m harness eval --task-dir $R --candidate $R/baseline.cu --scenarios quick \
  --json "$OUT/rmsnorm-quick.json" --table --timeout 70
if ! "$PY" -c "import json,sys; sys.exit(json.load(open('$OUT/rmsnorm-quick.json'))['status'] != 'ok')" 2>/dev/null; then
  step rmsnorm-quick-unfiltered 60 "$PY" -c "
import json
from harness.evaluate import Options, evaluate
r = evaluate(Options(task_dir='$R', candidate='$R/baseline.cu', scenarios='quick', confine=False, timeout=55))
json.dump(r, open('$OUT/rmsnorm-quick-unfiltered.json', 'w'), default=str)
print(r['status'], r['messages'], [(s['id'], s['status'], s.get('reason')) for s in r['scenarios']])"
fi
step adversarial 200 "$PY" -m harness.adversarial.run harness/adversarial/cuda/manifest.yaml --json "$OUT/adversarial.json"
"$PY" -m tools.lab.compare_results adversarial "$OUT/adversarial.json" > "$OUT/adversarial.txt" 2>&1
step flash-quick 80 "$PY" -m harness eval --task-dir $F --candidate $F/baseline.cu --scenarios quick \
  --json "$OUT/flash-quick.json" --table --timeout 75
fi
"$PY" - "$OUT" $NAMES > "$OUT/summary.txt" 2>&1 <<'PYEOF'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
for name in sys.argv[2:]:
    p = out / f"{name}.json"
    if not p.exists():
        print(name, "no result"); continue
    r = json.loads(p.read_text())
    print(f"== {name}: {r['status']}, {r['summary'].get('seconds')} s, x_base {r['summary'].get('speedup_vs_baseline_geomean')}, "
          f"x_peer {r['summary'].get('speedup_vs_peer_geomean')}")
    for m in r["messages"]:
        print("  message:", m[:300])
    stages = {}
    for s in r["scenarios"]:
        for k, v in (s.get("stage_seconds") or {}).items():
            stages[k] = stages.get(k, 0) + v
    print("  stage seconds:", {k: round(v, 1) for k, v in stages.items()},
          "statuses:", {st: sum(s["status"] == st for s in r["scenarios"]) for st in {s["status"] for s in r["scenarios"]}})
    excess = [s["timing"]["excess_ms"]["candidate"] - s["timing"]["excess_ms"]["baseline"] for s in r["scenarios"]
              if (s.get("timing") or {}).get("excess_ms", {}).get("baseline") is not None]
    tails = [s["timing"]["tail_ms"]["candidate"] - s["timing"]["tail_ms"]["baseline"] for s in r["scenarios"]
             if (s.get("timing") or {}).get("tail_ms", {}).get("baseline") is not None]
    busy = [s["timing"]["busy_ms"]["candidate"] - s["timing"]["busy_ms"]["baseline"] for s in r["scenarios"]
            if (s.get("timing") or {}).get("busy_ms", {}).get("baseline") is not None]
    for label, v in (("excess", excess), ("tail", tails), ("busy", busy)):
        if v:
            v = sorted(v)
            print(f"  cand-base {label} ms over {len(v)} scenarios: min {v[0]:.4f} median {v[len(v)//2]:.4f} "
                  f"p90 {v[int(0.9*(len(v)-1))]:.4f} max {v[-1]:.4f}")
    if len(r["scenarios"]) > 20:
        continue
    for s in r["scenarios"]:
        t = s.get("timing") or {}
        print(f"  {s['id']}: {s['status']} t={s.get('time_ms')} base={s.get('baseline_ms')} peers={s.get('peer_ms')} "
              f"excess={t.get('excess_ms')} busy={t.get('busy_ms')} tail={t.get('tail_ms')} reps={t.get('reps')} "
              f"{(s.get('reason') or '')[:300]}")
PYEOF
cat "$OUT/walls.txt" "$OUT/summary.txt"; tail -n 40 "$OUT/adversarial.txt"
exit 0
