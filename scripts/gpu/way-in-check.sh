#!/usr/bin/env bash
# Issue 40 on one H100/H200 (device tool), from the repository root: the Triton example and the
# multi-file CuTe example evaluated in full, with their peers. Carry .carry/cutlass (CUTLASS v4.7.0's
# include/: `mkdir -p .carry/cutlass && git -C <cutlass clone> archive v4.7.0 include | tar -x -C
# .carry/cutlass`) and, as for the other scripts, .carry/host/debs (bubblewrap's .deb). One call:
#   OUT=/tmp/out KS_COMMIT=<sha> bash scripts/gpu/way-in-check.sh        (about 150-200 s)
# 1. kernels/gemm_cute: --compile-only (registers, shared memory, spills), then the baseline folder's
#    full evaluation against cuBLAS (torch.matmul);
# 2. kernels/softmax_triton: the Triton baseline's full evaluation against torch.softmax and
#    torch.compile (Triton's JIT and torch.compile's first compile included);
# 3. each result checked against kernelseek.eval/1; the tables in $OUT/*.log, a summary on stdout.
# COMPILE_T, GEMM_T, SOFTMAX_T: each step's time limit in seconds (default 200, 180, 210).
# PART=2 (about 200 s): the Triton plumbing's tests (harness/tests/test_triton_cpu.py: Triton's
# interpreter, the adversarial Triton candidates) with this host's python3.
set -u
: "${OUT:?set OUT}"
PACK=wayin      # everything in $OUT/wayin.tgz, packed as each step ends (lib.sh)
. "$(dirname "$0")/lib.sh"
export KERNELSEEK_CUTLASS_DIR=${KERNELSEEK_CUTLASS_DIR:-$PWD/.carry/cutlass}
{ echo "cutlass: $KERNELSEEK_CUTLASS_DIR"; "$PY" -c 'import triton; print("triton", triton.__version__)'; } >> "$OUT/env.txt" 2>&1
if [ "${PART:-1}" = 2 ]; then
  step triton-tests 560 "$PY" -m pytest -q -x harness/tests/test_triton_cpu.py
  tail -3 "$OUT/triton-tests.log"
  exit 0
fi
G=kernels/gemm_cute
S=kernels/softmax_triton
step gemm-compile "${COMPILE_T:-200}" "$PY" -m harness eval --task-dir $G --candidate $G/baseline --compile-only --json "$OUT/gemm-compile.json"
pack
step gemm-full $(( ${GEMM_T:-180} + 20 )) "$PY" -m harness eval --task-dir $G --candidate $G/baseline --json "$OUT/gemm-full.json" --table --timeout "${GEMM_T:-180}"
pack
step softmax-full $(( ${SOFTMAX_T:-210} + 20 )) "$PY" -m harness eval --task-dir $S --candidate $S/baseline.py --json "$OUT/softmax-full.json" --table --timeout "${SOFTMAX_T:-210}"
for name in gemm-full softmax-full; do
  [ -f "$OUT/$name.json" ] && "$PY" -m harness check-result "$OUT/$name.json" > "$OUT/$name.schema.txt" 2>&1
  echo "== $name (schema: $(wc -l < "$OUT/$name.schema.txt" 2>/dev/null || echo '?') problem line(s))"
  grep -E '^(task|geomean|time spent)' "$OUT/$name.log" || tail -5 "$OUT/$name.log"
done
"$PY" - "$OUT" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
c = json.loads((out / "gemm-compile.json").read_text()) if (out / "gemm-compile.json").exists() else None
if c:
    k = c.get("compile") or {}
    print(f"gemm_cute compile-only: {c['status']}, {k.get('registers')} registers, {k.get('smem_bytes')} B smem, "
          f"{k.get('spills')} spills, {k.get('seconds')} s")
for name in ("gemm-full", "softmax-full"):
    p = out / f"{name}.json"
    if not p.exists():
        print(f"{name}: no result"); continue
    r = json.loads(p.read_text())
    s = r["summary"]
    print(f"{name}: {r['status']} on {r.get('gpu')}, correct {s.get('correct')}/{s.get('scenarios')}, "
          f"x baseline {s.get('speedup_vs_baseline_geomean')}, x peers {s.get('speedup_vs_peer_geomean')} "
          f"{s.get('speedup_vs_peer_ci')} {s.get('verdict_vs_peer')}, {s.get('seconds')} s")
    for m in r["messages"][:6]:
        print("   ", m[:200])
PY
