#!/usr/bin/env bash
# Issue 39 on one H100 or H200 (device tool, `nvidia-h100-x1` or `nvidia-h200`), from the repository
# root, with .carry/host/debs (bubblewrap's .deb: `apt-get download bubblewrap` there) carried:
#   KS_COMMIT=<this tree's commit> DEADLINE=600 OUT=/tmp/out bash scripts/gpu/trust-cuda-check.sh   (about 600 s)
# STEPS picks parts, in order (default: all of them, in this order):
#   syscalls   which system calls cudaMallocAsync/cudaFreeAsync make under the executor's filter, each
#              refusal trapped and named (tools/lab/alloc_syscalls.py), for each way of setting the
#              allocator up before the filter;
#   l2         whether the parent's own context reaches another process's persisting L2 lines
#              (tools/lab/l2_persist.py: reset, set-aside, the parent's eviction, the guard);
#   adversarial  every CUDA adversarial and honest candidate (harness/adversarial/cuda/manifest.yaml);
#   rms        rmsnorm's full evaluation of its baseline twice: the peers measured (kept), then with
#              the peers kept (the budget: 15 s; the A/A: `same`). The kept figures are keyed by the
#              peers' process count (timing/peer_figures.py), so the second names the first's
#              --peer-processes: without it, it measures the peers again in two processes (a host's
#              first evaluation, not the budget's case; the H100 run of 2026-12-06 at a2764bf);
#   flash      flash_attn_fwd's likewise (the budget: 45 s with the peers kept);
#   batch      the bound requests in batch mode (Options.bound_batch, bound.py's measure_batch): the
#              adversarial and honest set, then rmsnorm's and flash's baselines twice each (the first
#              keeps the peers' figures where the host has none, the second is timed with them kept: A/A),
#              to set beside the adversarial, rms and flash steps' single-call bound;
#   l2-gain    forge3 (the executor's persisting-L2 check forged) with the parent's guard off and on (the
#              bound requests off in both), and the baseline with it off: what the cheat gains, what the
#              guard costs honest code;
#   pytest     the CUDA tests (test_cuda.py but its run-time adversarial cases, run above;
#              test_cuda_driver.py, test_nvml.py) and the bound's and the cheats' own tests;
#   noise      twin executors' lean requests on the parent's clock (tools/lab/bound_noise.py);
#   load39     (first: the rest means little if it fails) the rmsnorm baseline on r1-c16384, no peers:
#              the library loaded under the seccomp filter's first step, the sandbox as the unprivileged
#              uid a root host starts it as (bwrap._setup() in load39.log), GPU access from it (~25 s);
#   harness39  the CPU side of issue 39 on this host's Python and torch: test_trust_cpu.py,
#              test_sandbox.py, test_executor.py (~120 s).
# Each step is time-boxed and skipped when less than its estimate is left before DEADLINE (seconds
# from the start, default 450); a failed step is reported and the rest go on. In $OUT: summary.txt
# (the table, last), walls.txt, trust.tgz (every log and JSON, packed after every step).
set -u
: "${OUT:?set OUT}"
PACK=trust
. "$(dirname "$0")/lib.sh"
W=$OUT
STEPS=${STEPS:-load39 syscalls l2 adversarial rms flash l2-gain pytest noise harness39}
DEADLINE=${DEADLINE:-450}
MANIFEST=harness/adversarial/cuda/manifest.yaml

fits() {   # fits NAME ESTIMATE: whether ESTIMATE seconds are left before DEADLINE (else noted as skipped)
  if [ $((SECONDS + $2)) -le "$DEADLINE" ]; then return 0; fi
  echo "$1: skipped (about $2 s needed, $((DEADLINE - SECONDS)) s left before DEADLINE=$DEADLINE)" | tee -a "$W/walls.txt"
  return 1
}
eval_json() {   # eval_json NAME TIMEOUT TASKDIR [ARGS...]: the task's baseline evaluated as the candidate
  local name=$1 t=$2 dir=$3; shift 3
  step "$name" $((t + 15)) "$PY" -m harness eval --task-dir "$dir" --candidate "$dir/baseline.cu" \
    --json "$W/$name.json" --timeout "$t" "$@"
}

# The candidates' libraries, built while the first steps run (nvcc, one per file; the evaluations find
# them in the compile cache).
"$PY" -c "from harness.adversarial.run import load_manifest, prebuild; t, e = load_manifest('$MANIFEST'); prebuild(t, e, None)" \
  > "$W/prebuild.log" 2>&1 &
PREBUILD=$!

for s in $STEPS; do case $s in
load39)
  fits load39 30 && step load39 90 "$PY" - "$W" <<'PYEOF'
import json, sys
from pathlib import Path
from harness.sandbox import bwrap
print("sandbox:", bwrap._setup(), flush=True)
from harness.evaluate import Options, evaluate
r = evaluate(Options(task_dir="kernels/rmsnorm", candidate="kernels/rmsnorm/baseline.cu", scenarios="r1-c16384",
                     with_peers=False))
print("status:", r["status"], [s.get("reason") for s in r["scenarios"]], flush=True)
for m in r["messages"]:
    print("message:", m[:300])
Path(sys.argv[1], "load39.json").write_text(json.dumps({"sandbox": str(bwrap._setup()), "status": r["status"],
                                                         "messages": r["messages"]}, indent=1))
PYEOF
  ;;
harness39)
  fits harness39 120 && step harness39 300 "$PY" -m pytest -q -rs -p no:cacheprovider harness/tests/test_trust_cpu.py \
    harness/tests/test_sandbox.py harness/tests/test_executor.py ;;
syscalls)
  fits syscalls 40 && step syscalls 120 "$PY" -m tools.lab.alloc_syscalls --json "$W/alloc.json" ;;
l2)
  fits l2 30 && step l2 90 "$PY" -m tools.lab.l2_persist --json "$W/l2.json" ;;
adversarial)
  wait "$PREBUILD" 2>/dev/null
  fits adversarial 180 && step adversarial 300 "$PY" -m harness.adversarial.run "$MANIFEST" --json "$W/adversarial.json" ;;
rms)
  fits rms 45 && eval_json rmsnorm-full 60 $R --peers-together --peer-processes 1 \
    && eval_json rmsnorm-kept 40 $R --peer-processes 1 ;;
flash)
  fits flash 150 && eval_json flash-full 200 $F --peers-together --peer-processes 1 \
    && eval_json flash-kept 90 $F --peer-processes 1 ;;
batch)
  wait "$PREBUILD" 2>/dev/null
  fits batch 150 && step adversarial-batch 300 "$PY" -m harness.adversarial.run "$MANIFEST" --bound-batch \
    --call-timeout 25 --json "$W/adversarial-batch.json"
  # twice each: the first keeps the peers' figures where this host has none, the second is the budget's case
  fits rms-batch 45 && eval_json rmsnorm-batch-first 60 $R --peer-processes 1 --bound-batch \
    && eval_json rmsnorm-batch 40 $R --peer-processes 1 --bound-batch
  fits flash-batch 150 && eval_json flash-batch-first 200 $F --peer-processes 1 --bound-batch \
    && eval_json flash-batch 90 $F --peer-processes 1 --bound-batch ;;
l2-gain)
  fits l2-gain 40 && step l2-gain 90 "$PY" - "$W" <<'PYEOF'
import json, sys, tempfile
from pathlib import Path
from harness.adversarial.run import load_manifest, run_entry
out = {}
task_dir, entries = load_manifest("harness/adversarial/cuda/manifest.yaml")
forge = next(e for e in entries if e["file"] == "forge3_l2_check.cu")
base = dict(forge, file="baseline.cu", path=task_dir / "baseline.cu")
with tempfile.TemporaryDirectory() as tmp:
    # the bound off in both: what the L2 cheat gains, apart from what its per-call host work costs it
    for label, entry, without in (("forge3, guard off", forge, ["allowlist", "parent_l2", "bound"]),
                                  ("forge3, guard on", forge, ["allowlist", "bound"]),
                                  ("baseline, guard off", base, ["parent_l2"])):
        got = run_entry(task_dir, dict(entry, without=without), Path(tmp), None)
        r = got["result"] or {}
        out[label] = {"status": got["status"], "x_base": (r.get("summary") or {}).get("speedup_vs_baseline_geomean"),
                      "reason": got["reason"], "per_scenario": {s["id"]: s.get("speedup_vs_baseline") for s in r.get("scenarios", [])}}
        print(label, json.dumps(out[label]), flush=True)
Path(sys.argv[1], "l2-gain.json").write_text(json.dumps(out, indent=1))
PYEOF
  ;;
pytest)
  fits pytest 90 && step pytest 200 "$PY" -m pytest -q -rs -p no:cacheprovider harness/tests/test_cuda.py \
    harness/tests/test_cuda_driver.py harness/tests/test_nvml.py harness/tests/test_bound.py \
    harness/tests/test_adversarial_walk.py -k "not caught_at_run_time" ;;
noise)
  fits noise 45 && step noise 90 "$PY" -m tools.lab.bound_noise --pairs 256 --json "$W/noise.json" ;;
*)
  echo "unknown step $s" | tee -a "$W/walls.txt" ;;
esac; pack; done
wait "$PREBUILD" 2>/dev/null

"$PY" - "$W" > "$W/summary.txt" 2>&1 <<'PYEOF'
import json, sys
from pathlib import Path
W = Path(sys.argv[1])


def bound_line(r):
    out = []
    for x in (r or {}).get("scenarios") or []:
        b = (x.get("timing") or {}).get("bound")
        if not isinstance(b, dict) or "factor" not in b:
            continue
        d = (b.get("d_ms") or {}).get("candidate")
        ci = (b.get("ci_ms") or {}).get("candidate") or [None]
        fig = (b.get("figure_ms") or {}).get("candidate")
        f = (b.get("factor") or {}).get("candidate")
        us = lambda v: "-" if v is None else f"{v * 1e3:+.1f}"
        calls = ""
        if "d_calls_ms" in b:     # batch mode: the K calls' own floor beside the slope's, and which held
            dk = b["d_calls_ms"].get("candidate")
            cik = (b.get("ci_calls_ms") or {}).get("candidate") or [None]
            calls = f" dK{us(dk)}/{us(cik[0])} by {(b.get('by') or {}).get('candidate', '-')}"
            ch = b.get("chain")      # the batch's calls chained by their data, and on how many slots
            calls += f" slots {b.get('slots')} chain {'-' if not ch else ('off' if ch.get('off') else ch['input'])}"
        out.append(f"{x['id']}:{b.get('mode', 'single')[0]}{b.get('calls', '')} d{us(d)}/{us(ci[0])}{calls} "
                   f"f{us(fig)} x{'-' if f is None else round(f, 2)}")
    return "; ".join(out)[:1500]


def load(name):
    p = W / name
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None


print("== issue 39 (CUDA trust): summary", (W / "env.txt").read_text().splitlines()[2:4] if (W / "env.txt").exists() else "")
alloc = load("alloc.json")
if alloc:
    print("-- cudaMallocAsync under the executor's filter (refused calls trapped):")
    for mode, r in alloc.items():
        traps = sorted({line.split("[")[-1].rstrip("]") + " " + line.split("path=")[-1].split()[0] if "path=" in line
                        else line.split("[")[-1].rstrip("]") for line in r["log"].splitlines() if "trapped" in line})
        print(f"   {mode:20} steps {'ok' if r['rc'] == 0 else 'FAILED'}; refused: {', '.join(traps) or 'none'}")
l2 = load("l2.json")
if l2:
    print(f"-- persisting L2 from another context: cold {l2['cold_ms'] * 1e3:.1f} us, warm {l2['read_ms']['none'] * 1e3:.1f} us; "
          f"parent's limit {l2['parent_limit_at_start']} -> {l2['parent_limit_after_pin']} after the other set "
          f"{l2['pin'].get('limit')} (guard: {l2.get('guard_check_after_pin') or 'no finding'})")
    for a, ms in l2["read_ms"].items():
        print(f"   {a:22} read {ms * 1e3:7.1f} us  reaches {l2['reaches'][a]!s:5}  parent's cost {l2['action_cost_ms'][a]:.3f} ms")
    print(f"   parent's own read after its flush: {l2['parent_read_after_flush_ms']}; guards: {l2.get('guards')}")
for adv_name in ("adversarial", "adversarial-batch"):
    adv = load(f"{adv_name}.json")
    if not adv:
        continue
    ok = sum(1 for o in adv if o["ok"])
    print(f"-- {adv_name}: {ok}/{len(adv)} as expected")
    for o in adv:
        r = o.get("result") or {}
        x = (r.get("summary") or {}).get("speedup_vs_baseline_geomean")
        mark = {True: "ok ", False: "MISS", None: "n/a"}[o["ok"]]
        if o["ok"] is not True or str(o.get("trust", "")).startswith("39"):
            print(f"   {mark} {o['file']:34} {str(o['status']):13} x_base {x if x is None else round(x, 3)!s:6} "
                  f"{(o['why'] or o['reason'] or '')[:150]}")
            # the bound per scenario, for the margin's calibration: id, mode/K, d (us), its interval's
            # lower end, the figure and the factor
            line = bound_line(r) if o["file"].startswith(("forge1", "forge5", "forge6", "forge7", "honest")) else ""
            if line:
                print("      " + line)
for name in ("rmsnorm-full", "rmsnorm-kept", "rmsnorm-batch-first", "rmsnorm-batch", "flash-full", "flash-kept",
             "flash-batch-first", "flash-batch"):
    r = load(f"{name}.json")
    if not r:
        continue
    s = r["summary"]
    sc = r["scenarios"]
    bounds = [x["timing"]["bound"] for x in sc if isinstance((x.get("timing") or {}).get("bound"), dict)
              and "factor" in x["timing"]["bound"]]
    raised = [b["factor"]["candidate"] for b in bounds if b["factor"].get("candidate", 1.0) > 1.0]
    pairs = sorted(b["pairs"] for b in bounds)
    secs = sum(b["seconds"] for b in bounds)
    stopped = {}
    for b in bounds:
        stopped[b["stopped"]] = stopped.get(b["stopped"], 0) + 1
    statuses, peers = {}, {}
    for x in sc:
        statuses[x["status"]] = statuses.get(x["status"], 0) + 1
        how = (x.get("timing") or {}).get("peers")
        if how:
            peers[how] = peers.get(how, 0) + 1
    print(f"-- {name}: {r['status']} {statuses}, {s.get('seconds')} s (timing {r.get('time_spent', {}).get('timing')} s), "
          f"x_base {s.get('speedup_vs_baseline_geomean')} {s.get('speedup_vs_baseline_ci')} {s.get('verdict_vs_baseline')}; "
          f"bound on {len(bounds)}/{len(sc)} scenarios, {secs:.1f} s, pairs min/median/max "
          f"{pairs[0] if pairs else None}/{pairs[len(pairs) // 2] if pairs else None}/{pairs[-1] if pairs else None}, "
          f"stopped {stopped}, raised {len(raised)} (max x{max(raised) if raised else 1.0:.3f}); peers {peers}")
    for m in r["messages"][:6]:
        print("   message:", m[:200])
    worst = sorted((x for x in sc if isinstance((x.get("timing") or {}).get("bound"), dict)
                    and "factor" in x["timing"]["bound"]),
                   key=lambda x: -((x["timing"]["bound"]["factor"].get("candidate") or 99)))[:4]
    print("   bound, highest factors:", bound_line({"scenarios": worst}))
    for x in sc:
        if x["status"] != "ok":
            print("   ", x["id"], x["status"], (x.get("reason") or "")[:250])
load39 = load("load39.json")
if load39:
    print(f"-- load39 (rmsnorm's baseline loaded under the filter's first step): {load39['status']}; sandbox "
          f"{load39['sandbox']}")
    for m in load39["messages"]:
        print("   message:", m[:200])
gain = load("l2-gain.json")
if gain:
    print("-- l2-gain:", "; ".join(f"{k}: {v['status']} x_base {v['x_base']}" for k, v in gain.items()))
noise = load("noise.json")
if noise:
    print("-- lean-request noise (twin executors, paired): " + "; ".join(
        f"{k}: d {v['d_median_ms'] * 1e3:+.2f} us, mad {v['d_mad_ms'] * 1e3:.2f} us, ci256 "
        f"{[round(c * 1e3, 2) for c in (v.get('ci256_ms') or [])]}" for k, v in noise.items()))
print("-- steps:")
print((W / "walls.txt").read_text() if (W / "walls.txt").exists() else "(none)")
PYEOF
tail -n 30 "$W"/pytest.log 2>/dev/null | grep -E "passed|failed|error" | tail -n 3 >> "$W/summary.txt"
tail -n 30 "$W"/harness39.log 2>/dev/null | grep -E "passed|failed|error|SKIP" | tail -n 5 >> "$W/summary.txt"
tail -n 3 "$W"/adversarial.log >> "$W/summary.txt" 2>/dev/null
cat "$W/summary.txt"
exit 0
